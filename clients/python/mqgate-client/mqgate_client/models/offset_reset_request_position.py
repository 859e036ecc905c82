from enum import StrEnum

class OffsetResetRequestPosition(StrEnum):
    FIRST_OFFSET = "FIRST_OFFSET"
    LAST_OFFSET = "LAST_OFFSET"
    TIMESTAMP = "TIMESTAMP"

    def __str__(self) -> str:
        return str(self.value)
