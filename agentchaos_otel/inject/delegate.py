"""Closing and context management handed to the wrapped transport, for every transport we wrap.

The chaos transport, the class-level hook and the guards each sit on a transport the user's
client owns; the client closes and enters/exits its transport, and that must reach the real one
underneath exactly as if we were not there. One place says how.
"""

from __future__ import annotations

from typing import Any, Self


class WrapsTransport:
    """A sync transport wrapper whose ``wrapped`` transport is closed, entered and exited with it."""

    wrapped: Any

    def close(self) -> None:
        self.wrapped.close()

    def __enter__(self) -> Self:
        if hasattr(self.wrapped, "__enter__"):
            self.wrapped.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if hasattr(self.wrapped, "__exit__"):
            self.wrapped.__exit__(*exc)


class WrapsAsyncTransport:
    """``WrapsTransport`` for async transports."""

    wrapped: Any

    async def aclose(self) -> None:
        await self.wrapped.aclose()

    async def __aenter__(self) -> Self:
        if hasattr(self.wrapped, "__aenter__"):
            await self.wrapped.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if hasattr(self.wrapped, "__aexit__"):
            await self.wrapped.__aexit__(*exc)
