from enum import StrEnum

class SubscriptionBodyFilterType(StrEnum):
    SQL92 = "SQL92"
    TAG = "TAG"

    def __str__(self) -> str:
        return str(self.value)
