from enum import StrEnum

class GroupMessageModel(StrEnum):
    BROADCASTING = "BROADCASTING"
    CLUSTERING = "CLUSTERING"

    def __str__(self) -> str:
        return str(self.value)
