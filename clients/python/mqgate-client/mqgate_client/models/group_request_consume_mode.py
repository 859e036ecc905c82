from enum import StrEnum

class GroupRequestConsumeMode(StrEnum):
    CONCURRENTLY = "CONCURRENTLY"
    ORDERLY = "ORDERLY"

    def __str__(self) -> str:
        return str(self.value)
