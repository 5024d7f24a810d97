"""What an endpoint's Hugging Face state means for money and for what a person may do with it
(hf-api.md §1.6): the one copy of these sets; the service API puts the answers on every row."""

from __future__ import annotations

BILLED = frozenset({"initializing", "running"})  # what Hugging Face bills
PAUSABLE = frozenset({"pending", "initializing", "running", "scaledToZero", "updating"})
RESUMABLE = frozenset({"paused", "failed", "updateFailed"})
# A batch window (a Job): HF bills from the job's start, so while it runs; a Job has no pause or resume.
JOB_BILLED = frozenset({"RUNNING", "UPDATING"})
