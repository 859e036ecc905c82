from enum import StrEnum

class LimitPolicyUnit(StrEnum):
    CONCURRENT_REQUESTS = "concurrent-requests"
    CONTENT_BYTES = "content-bytes"
    REQUESTS = "requests"

    def __str__(self) -> str:
        return str(self.value)
