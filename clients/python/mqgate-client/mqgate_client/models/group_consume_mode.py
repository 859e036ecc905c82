from enum import StrEnum

class GroupConsumeMode(StrEnum):
    CONCURRENTLY = "CONCURRENTLY"
    ORDERLY = "ORDERLY"

    def __str__(self) -> str:
        return str(self.value)
