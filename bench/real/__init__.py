"""The real-document quality bench: ``python -m bench real`` (see bench/README.md)."""
