"""Placeholder replaced below."""
class PartitionedProblem:  # noqa
    pass
