""" Contains all the data models used in inputs/outputs """

from .ack_request import AckRequest
from .blocked_key import BlockedKey
from .blocked_key_request import BlockedKeyRequest
from .blocked_key_state import BlockedKeyState
from .blocked_list import BlockedList
from .consume_from import ConsumeFrom
from .consume_from_position import ConsumeFromPosition
from .consume_from_view import ConsumeFromView
from .consume_from_view_position import ConsumeFromViewPosition
from .corrupt_list import CorruptList
from .corrupt_message import CorruptMessage
from .dead_letter import DeadLetter
from .dead_letter_properties import DeadLetterProperties
from .dlq_page import DLQPage
from .dry_run_result import DryRunResult
from .empty_receive import EmptyReceive
from .empty_receive_reason import EmptyReceiveReason
from .extend_request import ExtendRequest
from .field_problem import FieldProblem
from .get_open_api_response_200 import GetOpenApiResponse200
from .group import Group
from .group_consume_mode import GroupConsumeMode
from .group_limit import GroupLimit
from .group_list import GroupList
from .group_message_model import GroupMessageModel
from .group_request import GroupRequest
from .group_request_consume_mode import GroupRequestConsumeMode
from .group_request_message_model import GroupRequestMessageModel
from .group_status import GroupStatus
from .handle_result import HandleResult
from .handle_result_status import HandleResultStatus
from .handle_results import HandleResults
from .health import Health
from .health_status import HealthStatus
from .job import Job
from .job_filter import JobFilter
from .job_kind import JobKind
from .job_state import JobState
from .key_lag import KeyLag
from .key_lag_list import KeyLagList
from .key_limits import KeyLimits
from .limit_policy import LimitPolicy
from .limit_policy_unit import LimitPolicyUnit
from .limits_response import LimitsResponse
from .limits_response_scope import LimitsResponseScope
from .message import Message
from .message_list import MessageList
from .message_properties import MessageProperties
from .nack_request import NackRequest
from .offset_list import OffsetList
from .offset_reset_request import OffsetResetRequest
from .offset_reset_request_position import OffsetResetRequestPosition
from .problem import Problem
from .publish_batch_request import PublishBatchRequest
from .publish_batch_result import PublishBatchResult
from .publish_message_request import PublishMessageRequest
from .publish_message_request_properties import PublishMessageRequestProperties
from .publish_request import PublishRequest
from .publish_request_properties import PublishRequestProperties
from .publish_result import PublishResult
from .purge_request import PurgeRequest
from .push_body import PushBody
from .push_status import PushStatus
from .push_view import PushView
from .queue_offset import QueueOffset
from .queue_stats import QueueStats
from .receive_request import ReceiveRequest
from .receive_response import ReceiveResponse
from .received_message import ReceivedMessage
from .received_message_properties import ReceivedMessageProperties
from .redrive_request import RedriveRequest
from .redrive_result import RedriveResult
from .subscription_body import SubscriptionBody
from .subscription_body_filter_type import SubscriptionBodyFilterType
from .timeline import Timeline
from .timeline_event import TimelineEvent
from .timeline_event_type import TimelineEventType
from .topic import Topic
from .topic_limit import TopicLimit
from .topic_list import TopicList
from .topic_request import TopicRequest
from .topic_stats import TopicStats

__all__ = (
    "AckRequest",
    "BlockedKey",
    "BlockedKeyRequest",
    "BlockedKeyState",
    "BlockedList",
    "ConsumeFrom",
    "ConsumeFromPosition",
    "ConsumeFromView",
    "ConsumeFromViewPosition",
    "CorruptList",
    "CorruptMessage",
    "DeadLetter",
    "DeadLetterProperties",
    "DLQPage",
    "DryRunResult",
    "EmptyReceive",
    "EmptyReceiveReason",
    "ExtendRequest",
    "FieldProblem",
    "GetOpenApiResponse200",
    "Group",
    "GroupConsumeMode",
    "GroupLimit",
    "GroupList",
    "GroupMessageModel",
    "GroupRequest",
    "GroupRequestConsumeMode",
    "GroupRequestMessageModel",
    "GroupStatus",
    "HandleResult",
    "HandleResults",
    "HandleResultStatus",
    "Health",
    "HealthStatus",
    "Job",
    "JobFilter",
    "JobKind",
    "JobState",
    "KeyLag",
    "KeyLagList",
    "KeyLimits",
    "LimitPolicy",
    "LimitPolicyUnit",
    "LimitsResponse",
    "LimitsResponseScope",
    "Message",
    "MessageList",
    "MessageProperties",
    "NackRequest",
    "OffsetList",
    "OffsetResetRequest",
    "OffsetResetRequestPosition",
    "Problem",
    "PublishBatchRequest",
    "PublishBatchResult",
    "PublishMessageRequest",
    "PublishMessageRequestProperties",
    "PublishRequest",
    "PublishRequestProperties",
    "PublishResult",
    "PurgeRequest",
    "PushBody",
    "PushStatus",
    "PushView",
    "QueueOffset",
    "QueueStats",
    "ReceivedMessage",
    "ReceivedMessageProperties",
    "ReceiveRequest",
    "ReceiveResponse",
    "RedriveRequest",
    "RedriveResult",
    "SubscriptionBody",
    "SubscriptionBodyFilterType",
    "Timeline",
    "TimelineEvent",
    "TimelineEventType",
    "Topic",
    "TopicLimit",
    "TopicList",
    "TopicRequest",
    "TopicStats",
)
