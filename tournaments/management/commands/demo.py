"""``manage.py demo``: demo users, built-in bots as entries and a small finished tournament.

``make run`` calls it (with ``--gallery``) before starting the web server, so a newcomer finds a
finished tournament with its standings, and, with the gallery, one finished tournament of each
other game (a Jeu du Roi, a Dutch), a duplicate one (its deals' travellers) and one open for
registration, a practice run of Alice's bot (a version's "try it": its page is the author's,
and staff's once over, so the demo administrator sees it), and "Demo: playing now", a
tournament of two slower uploaded bots left to the worker, still playing when the site opens so
that its live pages have something to show: every page has something to show.
It plays the other tables in this process (no worker needed) and does nothing the second time,
unless ``--again`` asks for one more tournament.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

import games
from tournaments import selectors, services
from tournaments.models import Bot, BotVersion, Tournament
from tournaments.tournament_settings import TournamentSettings

DEMO_NAME = "Demo cup: Dame de pique"
# The gallery: (name, game, preset, rounds, deals per table, duplicate, played); the entries are
# the demo users' bots of that game, built-in heuristic, lowest and random bots in turn.
GALLERY = [
    ("Demo: Jeu du Roi", "roi", None, 1, 10, False, True),
    ("Demo: Dutch", "dutch", None, 2, 2, False, True),
    ("Demo: duplicate Dame de pique", "hearts", "whisthub", 1, 2, True, True),
    ("Demo: open for registration", "hearts", "whisthub", 3, 4, False, False),
]
GALLERY_BUILTINS = ["heuristic", "lowest", "random"]
PLAYING_NAME = "Demo: playing now"
# (user, bot name) of the two slower bots of PLAYING_NAME: uploaded, validated in the sandbox.
SLOW_BOTS = [("ivan", "Ivan's unhurried"), ("judy", "Judy's unhurried")]
SLOW_SECONDS = 0.15  # a decision of a slower bot
SLOW_BOT = f'''"""A demo bot that takes its time: {SLOW_SECONDS} s a decision, then its first
legal action (the demo's tournament "playing now" lasts a few minutes, for its live pages)."""

import time

from tapis_bot import Bot, run


class Unhurried(Bot):
    name = "unhurried"

    def act(self, observation, legal_actions):
        time.sleep({SLOW_SECONDS})
        return legal_actions[0]


if __name__ == "__main__":
    run(Unhurried())
'''.encode()
# (user, bot name, built-in bot)
DEMO_BOTS = [
    ("alice", "Alice's heuristic", "heuristic"),
    ("bob", "Bob's heuristic", "heuristic"),
    ("carol", "Carol's lowest", "lowest"),
    ("dave", "Dave's lowest", "lowest"),
    ("erin", "Erin's random", "random"),
    ("frank", "Frank's random", "random"),
    ("grace", "Grace's heuristic", "heuristic"),
    ("heidi", "Heidi's random", "random"),
]


class Command(BaseCommand):
    help = "Create demo users, built-in bots as entries and a small tournament, and play it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--again", action="store_true", help="play one more demo tournament even if one exists"
        )
        parser.add_argument(
            "--gallery",
            action="store_true",
            help="also a tournament of each other game, a duplicate one and an open one",
        )
        parser.add_argument("--rounds", type=int, default=3)
        parser.add_argument("--deals", type=int, default=4, help="deals per table")

    def handle(self, *args: Any, **options: Any) -> None:
        if getattr(settings, "PRODUCTION", False):
            raise CommandError("the demo is for demo mode, not production")
        existing = Tournament.objects.filter(
            name__startswith=DEMO_NAME, status=Tournament.Status.FINISHED
        ).first()
        if options["gallery"]:  # first: the home page starts from the last finished, the cup
            self._gallery()
        if existing is not None and not options["again"]:
            self.stdout.write(f"Demo tournament: {existing} (id {existing.pk}), already played")
        else:
            self._cup(options["rounds"], options["deals"])
        if options["gallery"]:
            self._practice()
            self._playing_now()

    def _practice(self) -> None:
        """A practice run of the first demo bot, played here (once): the demo's own, never a
        member's (a practice run is private to its author)."""
        version = self._demo_bots(DEMO_BOTS[:1])[0]
        run = Tournament.objects.filter(
            practice=True, status=Tournament.Status.FINISHED, entries__version=version
        ).first()
        if run is None:
            run = services.practice_create(
                owner=version.bot.owner, version=version, deals=2, opponent="random"
            )
            services.tournament_run_here(tournament=run, worker="demo")
        self.stdout.write(f"Demo practice run: /practice/{run.pk}/ ({run.name})")

    def _playing_now(self) -> None:
        """Two slower bots (uploaded, validated here in the sandbox) and two built-in ones in
        a tournament started and left to the worker (once)."""
        tournament = Tournament.objects.filter(name=PLAYING_NAME).first()
        if tournament is None:
            versions = [self._slow_bot(user, name) for user, name in SLOW_BOTS]
            refused = [v for v in versions if v.status != BotVersion.Status.READY]
            if refused:
                self.stdout.write(
                    f"{PLAYING_NAME!r} not made: {refused[0].label} was not validated "
                    f"({refused[0].report.get('reason', refused[0].status)})"
                )
                return
            versions += self._demo_bots(
                [("alice", "Alice's heuristic", "heuristic"), ("carol", "Carol's lowest", "lowest")]
            )
            tournament_settings = TournamentSettings(
                name=PLAYING_NAME, game="hearts", preset="whisthub", rounds=4, deals_per_table=8
            )
            tournament, _ = self._tournament(tournament_settings, versions, play=False)
            services.tournament_start(tournament=tournament)
            tournament.refresh_from_db()
        self.stdout.write(
            f"Demo tournament {PLAYING_NAME!r} (id {tournament.pk}): {tournament.status}, "
            "its tables played by the worker"
        )

    def _slow_bot(self, username: str, bot_name: str) -> BotVersion:
        """A slower bot's ready version (uploaded and validated here, once)."""
        bot = self._demo_bot(username, bot_name, game="hearts")
        version = bot.versions.order_by("-number").first()
        if version is None:
            version = services.bot_version_create(
                bot=bot, content=SLOW_BOT, filename="unhurried.py"
            )
        if version.status in (BotVersion.Status.PENDING, BotVersion.Status.VALIDATING):
            version = services.bot_version_validate(version_id=version.pk)
        return version

    def _cup(self, rounds: int, deals: int) -> None:
        """The demo cup: the eight demo bots, Swiss seating, played here."""
        began = time.monotonic()
        count = Tournament.objects.filter(name__startswith=DEMO_NAME).count()
        tournament_settings = TournamentSettings(
            name=DEMO_NAME if not count else f"{DEMO_NAME} #{count + 1}",
            game="hearts",
            preset="whisthub",
            rounds=rounds,
            deals_per_table=deals,
            seating="swiss",
        )
        tournament, tables = self._tournament(tournament_settings, self._demo_bots(), play=True)
        self.stdout.write(
            f"Demo tournament {tournament.name!r} (id {tournament.pk}): {tables} tables played "
            f"in {time.monotonic() - began:.1f} s, {tournament.status}"
        )
        for row in selectors.standings_for_tournament(tournament=tournament)[:3]:
            self.stdout.write(
                f"  {row.rank}. {row.entry.version.label} ({float(row.points):g} points)"
            )

    def _tournament(
        self, tournament_settings: TournamentSettings, versions: list[BotVersion], *, play: bool
    ) -> tuple[Tournament, int]:
        """A tournament of the demo administrator with ``versions`` entered by their authors,
        left open or played here: the tournament and the tables played."""
        with transaction.atomic():
            tournament = services.tournament_create(
                organiser=self._organiser(), settings=tournament_settings
            )
            services.tournament_open(tournament=tournament)
            for version in versions:
                services.entry_register(
                    tournament=tournament, version=version, user=version.bot.owner
                )
        tables = 0
        if play:
            services.tournament_start(tournament=tournament)
            tables = services.tournament_run_here(tournament=tournament, worker="demo")
            tournament.refresh_from_db()
        return tournament, tables

    def _organiser(self) -> Any:
        organiser = get_user_model().objects.filter(is_superuser=True).order_by("pk").first()
        if organiser is None:
            organiser, _ = get_user_model().objects.get_or_create(username="organiser")
        return organiser

    def _gallery(self) -> None:
        """The gallery's tournaments that are not there yet, each played (or left open)."""
        for name, game, preset, rounds, deals, duplicate, played in GALLERY:
            if Tournament.objects.filter(name=name).exists():
                continue
            began = time.monotonic()
            players = games.load(game, preset).players
            count = players * 2 if duplicate else players + (0 if played else -1)
            bots = [
                (username, f"{username.capitalize()}'s {game} bot", GALLERY_BUILTINS[n % 3])
                for n, (username, _, _) in enumerate(DEMO_BOTS[:count])
            ]
            tournament_settings = TournamentSettings(
                name=name,
                game=game,
                preset=preset,
                rounds=rounds,
                deals_per_table=deals,
                duplicate=duplicate,
                seating="swiss" if rounds > 1 and not duplicate else "random",
            )
            versions = self._demo_bots(bots, game=game)
            tournament, _ = self._tournament(tournament_settings, versions, play=played)
            self.stdout.write(
                f"Demo tournament {name!r} (id {tournament.pk}): {tournament.status} "
                f"in {time.monotonic() - began:.1f} s"
            )

    def _demo_bots(
        self, bots: list[tuple[str, str, str]] = DEMO_BOTS, *, game: str = "hearts"
    ) -> list[BotVersion]:
        versions = []
        for username, bot_name, builtin in bots:
            bot = self._demo_bot(username, bot_name, game=game)
            version = (
                bot.versions.filter(status=BotVersion.Status.READY).order_by("-number").first()
            )
            if version is None:
                version = services.bot_version_create(bot=bot, builtin=builtin)
            versions.append(version)
        return versions

    def _demo_bot(self, username: str, bot_name: str, *, game: str) -> Bot:
        """A demo user's bot of this name (made once)."""
        user = self._demo_user(username)
        bot = Bot.objects.filter(owner=user, name=bot_name).first()
        if bot is None:
            bot = services.bot_create(owner=user, name=bot_name, game=game)
        return bot

    def _demo_user(self, username: str) -> Any:
        """A demo user (made once, with no password: nobody logs in as one)."""
        user, created = get_user_model().objects.get_or_create(username=username)
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
        return user
