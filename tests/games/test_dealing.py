"""Dealing (docs/dealing.md): published test vectors, the documented reference implementation,
and the fast shuffle against the reference stream."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pytest

import games
from games.dealing import DealRng, shuffled
from games.hearts import HeartsGame

DOC = Path(__file__).resolve().parents[2] / "docs" / "dealing.md"

# The same vectors as docs/dealing.md, as literal strings (the doc is checked separately).
FOUR_PLAYERS = {
    (0, 0): [
        "KC 2D TD 2H 5H 6H 9H TH JH AH 2S 4S 6S",
        "2C 5C 6C 9C 3D 6D 9D 7H QH 5S 9S TS KS",
        "3C 4C TC JC 4D 5D 7D 8D KD AD 8H KH 8S",
        "7C 8C QC AC JD QD 3H 4H 3S 7S JS QS AS",
    ],
    (42, 3): [
        "3C 5C 9C JC 3D 5D 6D 8D 9D 5H TH QH 5S",
        "6C 8C 4D KD 6H 7H 8H KH 3S 6S 8S JS KS",
        "4C TC AC 2D TD JD QD JH 4S 7S 9S TS QS",
        "2C 7C QC KC 7D AD 2H 3H 4H 9H AH 2S AS",
    ],
    (2024, 1): [
        "5C AC 2D 6D 9D TD JD AD 2H 5S 9S TS JS",
        "4C 3D 5D 8D 3H 5H 8H 9H JH QH KH 2S 8S",
        "2C 9C TC QC 4D 7D 4H TH AH 4S 6S QS AS",
        "3C 6C 7C 8C JC KC QD KD 6H 7H 3S 7S KS",
    ],
}
DECK_SEED0 = (
    "38 0 32 48 34 42 16 49 33 31 25 23 30 47 15 28 13 36 1 40 41 17 45 27 35 50 "
    "8 10 11 14 2 44 39 7 24 51 29 20 9 12 21 4 19 6 43 46 37 5 26 3 18 22"
)
FIVE_PLAYERS_SEED7 = [
    "3C TC 7D AD 3H TH QH AH 6S 9S",
    "5C 7C 9C KC TD 2H 6H 7H JH 5S",
    "6C QC 5D 8D 9D QD 5H 3S JS KS",
    "2C 4C AC 2D 3D 4D 4H 2S 8S AS",
    "8C JC 6D JD KD 9H KH 4S 7S QS",
]
TWO_PLAYERS_SEED7 = [
    "3C JC 4D 5D 6D 7D 9D 4H 6H KH 3S 5S 6S",
    "2C 5C 8C 9C QD KD 3H 7H TH AH 2S KS AS",
]
STOCK_SEED7 = "TD 8D 8S 9H AD 7C QC AC QS 9S 2H 5H 2D 7S TC KC JS 4C JD QH JH 6C 3D 4S TS 8H"


def hearts(preset: str = "whisthub", **overrides: object) -> HeartsGame:
    game = games.load("hearts", preset, **overrides)
    assert isinstance(game, HeartsGame)
    return game


def hands_of(game: HeartsGame, seed: int, deal_index: int) -> list[str]:
    record = game.new_deal(deal_index, seed=seed).deal_record()
    hands = record["hands"]
    assert isinstance(hands, list)
    return [" ".join(str(c) for c in hand) for hand in hands if isinstance(hand, list)]


def test_first_block_of_the_stream() -> None:
    digest = hashlib.sha256(b"tapis/v1/deal/0/0/0").hexdigest()
    assert digest == "f2a6f8aa2b79a363bb19a0c9a03048e77f18d55557bdbf40481398cb6a1b2db4"
    rng = DealRng(0, 0)
    assert [rng.next_word() for _ in range(8)] == [
        4071028906, 729391971, 3139018953, 2687518951,
        2132333909, 1472053056, 1209243851, 1780166068,
    ]  # fmt: skip


def test_shuffled_deck_vector() -> None:
    assert shuffled(52, seed=0, deal_index=0) == [int(x) for x in DECK_SEED0.split()]


@pytest.mark.parametrize(("seed", "deal_index"), sorted(FOUR_PLAYERS))
@pytest.mark.parametrize("preset", ["whisthub", "classic-fr", "classic-fr-sourdine"])
def test_four_player_vectors_for_every_four_player_preset(
    preset: str, seed: int, deal_index: int
) -> None:
    assert hands_of(hearts(preset), seed, deal_index) == FOUR_PLAYERS[seed, deal_index]


def test_five_player_vector_with_its_reserve() -> None:
    game = hearts("classic-fr", players=5)
    assert hands_of(game, 7, 0) == FIVE_PLAYERS_SEED7
    assert game.new_deal(0, seed=7).deal_record()["reserve"] == ["8H", "TS"]


def test_two_player_vector_with_its_stock() -> None:
    game = hearts("two-player")
    assert hands_of(game, 7, 0) == TWO_PLAYERS_SEED7
    assert game.new_deal(0, seed=7).deal_record()["stock"] == STOCK_SEED7.split()


def doc_vectors() -> list[tuple[str, list[str]]]:
    """Every ``<!-- vector ... -->`` block of docs/dealing.md: (its header, its lines)."""
    text = DOC.read_text()
    blocks = re.findall(r"<!-- vector (.*?) -->\n((?: {4}.*\n)+)", text)
    return [(header, [line.strip() for line in body.splitlines()]) for header, body in blocks]


def test_docs_vectors_are_what_the_engine_deals() -> None:
    vectors = doc_vectors()
    assert len(vectors) == 6
    for header, lines in vectors:
        fields = dict(f.split("=") for f in header.split() if "=" in f)
        seed, deal_index = int(fields["seed"]), int(fields["deal"])
        if header.startswith("deck"):
            assert " ".join(lines).split() == [
                str(c) for c in shuffled(52, seed=seed, deal_index=deal_index)
            ]
            continue
        players = int(fields["players"])
        if "stock" in header.split():
            game = hearts("two-player")
        else:
            game = hearts("classic-fr", players=players) if players != 4 else hearts()
        record = game.new_deal(deal_index, seed=seed).deal_record()
        expected = hands_of(game, seed, deal_index)
        if "reserve" in header.split():
            expected.append(" ".join(record["reserve"]))  # type: ignore[arg-type]
        if "stock" in header.split():
            expected.append(" ".join(record["stock"]))  # type: ignore[arg-type]
        assert lines == expected, header


def reference_implementation() -> dict[str, Any]:
    """The Python reference of docs/dealing.md section 5, run as written."""
    text = DOC.read_text()
    code = re.search(r"## 5\..*?```python\n(.*?)```", text, re.S)
    assert code is not None
    namespace: dict[str, Any] = {}
    exec(compile(code.group(1), str(DOC), "exec"), namespace)
    return namespace


def test_docs_reference_implementation_deals_like_the_engine() -> None:
    ref = reference_implementation()
    for seed in (0, 1, 7, 42, 2**40 + 3):
        for deal_index in range(6):
            assert ref["shuffled_deck"](seed, deal_index) == shuffled(
                52, seed=seed, deal_index=deal_index
            )
            for players, preset in ((4, "whisthub"), (3, "classic-fr"), (6, "classic-fr")):
                game = hearts(preset, players=players)
                state = game.new_deal(deal_index, seed=seed)
                hands, rest = ref["deal"](seed, deal_index, players)
                assert [state.hand(s) for s in range(players)] == [
                    sum(1 << c for c in hand) for hand in hands
                ]
            hands, rest = ref["deal"](seed, deal_index, 2, stock=True)
            record = hearts("two-player").new_deal(deal_index, seed=seed).deal_record()
            assert record["stock"] == [games.card_name(c) for c in rest]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 8, 9, 16, 17, 52, 104, 300])
def test_fast_shuffle_is_the_reference_shuffle(n: int) -> None:
    for seed in range(40):
        order = list(range(n))
        DealRng(seed, seed % 5, "deal").shuffle(order)
        assert shuffled(n, seed=seed, deal_index=seed % 5) == order
        order = list(range(n))
        DealRng(seed, 1, "dealer").shuffle(order)
        assert shuffled(n, seed=seed, deal_index=1, purpose="dealer") == order


def test_fast_shuffle_falls_back_when_a_word_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    real = hashlib.sha256

    class Rigged:
        """SHA-256 whose first word of block 0 is 2**32 - 1: below(52) must reject it."""

        def __init__(self, data: bytes = b"") -> None:
            self._data = data

        def update(self, data: bytes) -> None:
            self._data += data

        def copy(self) -> Rigged:
            return Rigged(self._data)

        def digest(self) -> bytes:
            digest = real(self._data).digest()
            if self._data.endswith(b"/0"):
                digest = b"\xff\xff\xff\xff" + digest[4:]
            return digest

    monkeypatch.setattr(hashlib, "sha256", Rigged)
    order = list(range(52))
    DealRng(5, 0).shuffle(order)
    assert shuffled(52, seed=5, deal_index=0) == order
    monkeypatch.undo()
    assert shuffled(52, seed=5, deal_index=0) != order  # the rigged stream really differed


def test_bad_seeds_and_indexes_are_refused() -> None:
    for bad in (-1, 1.5, True, "7"):
        with pytest.raises(ValueError, match="non-negative integer"):
            shuffled(52, seed=bad, deal_index=0)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="non-negative integer"):
            shuffled(52, seed=0, deal_index=bad)  # type: ignore[arg-type]


def test_the_deal_depends_only_on_seed_index_players_and_leftovers() -> None:
    base = hands_of(hearts(), 5, 2)
    assert hands_of(hearts("classic-fr"), 5, 2) == base
    assert hands_of(hearts(moon="none", td_bonus=True, pass_schedule="left"), 5, 2) == base
    assert hands_of(hearts(), 5, 3) != base
    assert hands_of(hearts(), 6, 2) != base
