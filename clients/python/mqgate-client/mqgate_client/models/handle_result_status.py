from enum import StrEnum

class HandleResultStatus(StrEnum):
    EXPIRED = "expired"
    INVALID = "invalid"
    OK = "ok"

    def __str__(self) -> str:
        return str(self.value)
