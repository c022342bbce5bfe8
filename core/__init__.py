"""What every app shares and nothing above it: errors and their catalogue, the one exception
handler and error envelope, ids, wire formats, the API base view, the request context, the
Redis client, metrics and the edge to the web server's socket. It imports no app of the project
(an import-linter contract)."""
