from enum import StrEnum

class BlockedKeyState(StrEnum):
    BLOCKED = "BLOCKED"
    PARKED = "PARKED"
    RESUMED = "RESUMED"
    SKIPPED = "SKIPPED"

    def __str__(self) -> str:
        return str(self.value)
