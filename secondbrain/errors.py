class AppError(Exception):
    """A failure the user can act on: a stable machine code, a sentence for a person, an HTTP status.

    Services raise it; the API turns it into `{"error": {"code", "message"}}` and pages show the
    message. The code is part of the API contract.
    """

    def __init__(self, code: str, message: str, *, status: int = 400, extra: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        # Facts a client can act on, sent beside code and message (the id of the duplicate, say).
        self.extra = extra or {}
