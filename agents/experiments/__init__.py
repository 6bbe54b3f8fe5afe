"""Experiments built on the trainers and the evaluation harness (``pokersquares experiment ...``)."""
