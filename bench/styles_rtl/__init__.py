"""Right-to-left documents in page styles the corpus does not print (issue 24)."""
