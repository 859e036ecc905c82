from enum import StrEnum

class JobState(StrEnum):
    DONE = "DONE"
    FAILED = "FAILED"
    RUNNING = "RUNNING"

    def __str__(self) -> str:
        return str(self.value)
