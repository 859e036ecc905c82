from enum import StrEnum

class EmptyReceiveReason(StrEnum):
    KEYS_BLOCKED = "KEYS_BLOCKED"
    NOT_VISIBLE_YET = "NOT_VISIBLE_YET"
    NO_MESSAGES = "NO_MESSAGES"
    NO_SUBSCRIPTION_MATCH = "NO_SUBSCRIPTION_MATCH"
    PAUSED = "PAUSED"

    def __str__(self) -> str:
        return str(self.value)
