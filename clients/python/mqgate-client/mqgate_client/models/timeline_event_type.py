from enum import StrEnum

class TimelineEventType(StrEnum):
    ACKED = "ACKED"
    DEAD_LETTERED = "DEAD_LETTERED"
    DELIVERED = "DELIVERED"
    LEASE_EXPIRED = "LEASE_EXPIRED"
    NACKED = "NACKED"
    PUBLISHED = "PUBLISHED"
    REDRIVEN = "REDRIVEN"
    RETRY_SCHEDULED = "RETRY_SCHEDULED"
    SKIPPED = "SKIPPED"

    def __str__(self) -> str:
        return str(self.value)
