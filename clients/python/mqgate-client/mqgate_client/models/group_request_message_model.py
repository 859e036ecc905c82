from enum import StrEnum

class GroupRequestMessageModel(StrEnum):
    BROADCASTING = "BROADCASTING"
    CLUSTERING = "CLUSTERING"

    def __str__(self) -> str:
        return str(self.value)
