from enum import StrEnum

class LimitsResponseScope(StrEnum):
    INSTANCE = "instance"
    SERVER = "server"

    def __str__(self) -> str:
        return str(self.value)
