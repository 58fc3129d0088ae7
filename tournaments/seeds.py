"""Fair dealing: a tournament's secret seed, its published commitment, and the seeds each
table deals from, derived from it.

Pure Python (no Django): anyone holding the revealed seed can recompute every table's deal seed
and check the commitment.
"""

from __future__ import annotations

import hashlib
import secrets

from games.dealing import DealRng

SEED_BITS = 128
"""Tournament seeds are 128-bit: the published commitment cannot be brute-forced."""

DEAL_SEED_BITS = 63
"""Table deal seeds fit a signed 64-bit database column."""


def new_tournament_seed() -> int:
    """A fresh secret tournament seed (from the operating system's CSPRNG)."""
    return secrets.randbits(SEED_BITS)


def seed_commitment(seed: int) -> str:
    """The published commitment of a tournament seed: SHA-256 of its decimal digits, in hex.

    Anyone can check it once the seed is revealed (``printf %s SEED | sha256sum``).

    >>> seed_commitment(42) == hashlib.sha256(b"42").hexdigest()
    True
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"a tournament seed is a non-negative integer, not {seed!r}")
    return hashlib.sha256(str(seed).encode("ascii")).hexdigest()


def commitment_matches(seed: int, commitment: str) -> bool:
    """Whether a revealed seed is the one the commitment was made for.

    >>> commitment_matches(42, seed_commitment(42)), commitment_matches(43, seed_commitment(42))
    (True, False)
    """
    return secrets.compare_digest(seed_commitment(seed), commitment.strip().lower())


def _derived(seed: int, index: int, purpose: str, bits: int = DEAL_SEED_BITS) -> int:
    rng = DealRng(seed, index, purpose)
    value = (rng.next_word() << 32) | rng.next_word()
    return value >> (64 - bits)


def table_deal_seed(
    tournament_seed: int, *, round_number: int, table_number: int, duplicate: bool
) -> int:
    """The seed a table deals its deals from (deal ``i`` is ``game.new_deal(i, seed=...)``).

    Derived through SHA-256 (``games.dealing``) so that a published table seed says nothing
    about the tournament seed or the other tables. With ``duplicate`` every table of a round
    gets the round's seed, so every table plays the same deals.

    >>> a = table_deal_seed(5, round_number=1, table_number=1, duplicate=True)
    >>> a == table_deal_seed(5, round_number=1, table_number=2, duplicate=True)
    True
    >>> a == table_deal_seed(5, round_number=1, table_number=2, duplicate=False)
    False
    """
    if round_number < 1 or table_number < 1:
        raise ValueError("rounds and tables are numbered from 1")
    if duplicate:
        return _derived(tournament_seed, round_number, "round-deals")
    return _derived(tournament_seed, round_number, f"table-deals-{table_number}")
