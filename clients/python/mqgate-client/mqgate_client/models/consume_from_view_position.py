from enum import StrEnum

class ConsumeFromViewPosition(StrEnum):
    FIRST_OFFSET = "FIRST_OFFSET"
    LAST_OFFSET = "LAST_OFFSET"
    TIMESTAMP = "TIMESTAMP"

    def __str__(self) -> str:
        return str(self.value)
