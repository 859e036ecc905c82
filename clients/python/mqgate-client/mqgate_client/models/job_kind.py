from enum import StrEnum

class JobKind(StrEnum):
    DLQ_PURGE = "DLQ_PURGE"
    DLQ_REDRIVE = "DLQ_REDRIVE"
    TOPIC_PURGE = "TOPIC_PURGE"

    def __str__(self) -> str:
        return str(self.value)
