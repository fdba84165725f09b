"""The HTTP server around the app, for what aiohttp answers before any middleware runs.

A request the HTTP parser refuses (a request line or header over the size limits, too many
headers, a control character, a bare CR or LF, obs-fold, a broken chunked body) never reaches
a handler: aiohttp's `RequestHandler.handle_error` answers it itself, as `text/plain` echoing the
offending bytes (an API key or claim token with them) and logs a traceback carrying the same
bytes. `EnvelopeRequestHandler` answers those in the spec's envelope with `X-Request-Id`
instead, names only the kind of fault, and logs one line without the request's bytes.

`ApiRunner` is `web.AppRunner` whose server makes these handlers; `rfqsim serve` uses it."""

from __future__ import annotations

import logging

from aiohttp import web
from aiohttp.http_exceptions import (
    BadHttpMethod,
    BadStatusLine,
    ContentLengthError,
    HttpProcessingError,
    InvalidHeader,
    InvalidURLError,
    LineTooLong,
    PayloadEncodingError,
    TransferEncodingError,
)
from aiohttp.web_protocol import RequestHandler, _ErrInfo
from aiohttp.web_request import BaseRequest

from simulator.api.http.appkeys import RANDOM
from simulator.api.http.middleware import render_error
from simulator.errors import InternalError, InvalidRequest, ServiceError

log = logging.getLogger("rfqsim.http")

# (exception class, details.reason, message): most specific first. The message never quotes
# the request, whose bytes may hold a secret.
_PARSE_FAULTS: tuple[tuple[type[HttpProcessingError], str, str], ...] = (
    (LineTooLong, "line_too_long", "The request line or a header is longer than allowed"),
    (BadHttpMethod, "bad_method", "The request method is not a valid HTTP method"),
    (BadStatusLine, "bad_request_line", "The request line is malformed"),
    (InvalidURLError, "bad_request_line", "The request target is malformed"),
    (InvalidHeader, "bad_header", "A header is malformed"),
    (TransferEncodingError, "bad_body_framing", "The request body's framing is malformed"),
    (ContentLengthError, "bad_body_framing", "The request body is shorter than Content-Length"),
    (PayloadEncodingError, "bad_body_framing", "The request body's encoding is malformed"),
)


def parse_fault(exc: BaseException | None) -> tuple[str, str]:
    """`(details.reason, message)` for an HTTP parser error, without its text."""
    if isinstance(exc, HttpProcessingError):
        for kind, reason, message in _PARSE_FAULTS:
            if isinstance(exc, kind):
                return reason, message
        text = (exc.message or "").lower()
        # llhttp (the C parser) reports most framing faults as a plain BadHttpMessage.
        if "too many headers" in text or "header overflow" in text:
            return "too_many_headers", "The request has more headers than allowed"
        if "header" in text:
            return "bad_header", "A header is malformed"
        if any(word in text for word in ("chunk", "content-length", "transfer-encoding")):
            return "bad_body_framing", "The request body's framing is malformed"
        if any(word in text for word in ("version", "status line", "url", "method")):
            return "bad_request_line", "The request line is malformed"
    return "malformed_http", "The request is not well-formed HTTP/1.1"


class EnvelopeRequestHandler(RequestHandler):
    """aiohttp's connection handler with errors answered in the envelope (see the module)."""

    app: web.Application  # for request ids; set by the server that makes the handler

    def data_received(self, data: bytes) -> None:
        request = self._current_request
        queued = len(self._messages)
        super().data_received(data)
        if request is None or len(self._messages) == queued:
            return
        failure = self._messages[-1][0]
        if isinstance(failure, _ErrInfo) and not request.content.is_eof():
            # A framing error inside the body of the request being handled (a bad chunk size
            # in a later packet): aiohttp queues an error answer behind that request but never
            # ends its body, so the handler would wait for the rest forever. Ending the body
            # with the error lets the handler answer (400 through the error middleware); no
            # lingering read of the rest, which would only meet the same error again.
            request.content.set_exception(failure.exc)
            self._lingering_time = 0.0

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        request_id = self.app[RANDOM].new_id("req")
        error: ServiceError
        if isinstance(exc, ConnectionError):
            # The client went away mid-request: nobody will read an answer, nothing broke.
            log.debug("client of request %s went away: %s", request_id, type(exc).__name__)
            error = InvalidRequest("The connection was lost")
        elif isinstance(exc, HttpProcessingError) or status == 400:
            reason, text = parse_fault(exc)
            log.info(
                "refused a malformed request from %s: %s (%s, request %s)",
                request.remote,
                reason,
                type(exc).__name__ if exc is not None else status,
                request_id,
            )
            error = InvalidRequest(text, details={"reason": reason})
        else:
            # An exception escaped the middleware (it renders everything it sees, so this is a
            # fault of ours): logged with its traceback, which the redacting formatter cleans.
            log.error(
                "unhandled error outside the middleware (request %s)", request_id, exc_info=exc
            )
            error = InternalError()
        if request.writer.output_size > 0:
            # Part of a response is already out: nothing well-formed can follow it.
            raise ConnectionError("response already started; cannot send the error")
        response = render_error(error, request_id)
        response.headers["X-Request-Id"] = request_id
        response.force_close()
        return response


class EnvelopeServer(web.Server):
    """`web.Server` making `EnvelopeRequestHandler`s; knows the app for its request ids."""

    app: web.Application

    def __call__(self) -> RequestHandler:
        handler = EnvelopeRequestHandler(self, loop=self._loop, **self._kwargs)
        handler.app = self.app
        return handler


class ApiRunner(web.AppRunner):
    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        # Same object, our subclass: it only overrides how connection handlers are made.
        server.__class__ = EnvelopeServer
        assert isinstance(server, EnvelopeServer)
        server.app = self.app
        return server
