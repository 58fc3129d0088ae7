"""Views of the public site. Each reads its page through one selector of
``tournaments.page_selectors`` and renders a template: no query and no rule here.

Hidden information (a table being played, a duplicate round still playing, a seed before the
end) is left out by the selectors, for everyone, staff included; a page that would show
nothing but hidden information answers 403 with the reason (templates/403.html).
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.templatetags.static import static
from django.urls import reverse
from django.views.decorators.http import require_safe
from django_htmx.http import HttpResponseStopPolling

from tournaments import member_selectors, page_selectors
from tournaments.page_selectors import examples
from tournaments.page_selectors.docs import guide_html

# The guides served under /docs/, by slug: (file in docs/, title, who it is for).
DOCS = {
    "protocol": ("protocol.md", "The bot protocol", "Bot authors: what a bot reads and writes."),
    "api": ("api.md", "The REST API", "Bot authors and tools: a tournament through curl."),
    "rules": ("rules.md", "The rules", "Everyone: the rules of every game and preset."),
    "pages": ("pages.md", "The site", "Organisers and spectators: what each page shows."),
    "members": ("members.md", "Members", "Bot authors and organisers: their pages, step by step."),
    "tournaments": ("tournaments.md", "Tournaments", "Organisers: formats, points, ties."),
    "dealing": ("dealing.md", "Dealing", "Everyone: how seeds make the cards, checkably."),
    "examples": (
        "examples/README.md",
        "Example bots",
        "Bot authors: a small bot in each language, how to build and try it.",
    ),
    "sandbox": (
        "sandbox.md",
        "The sandbox",
        "Bot authors and operators: what a bot may do, its limits per language.",
    ),
    "operations": (
        "operations.md",
        "Operations",
        "Operators: processes, settings, the sweep, what to do when things fail.",
    ),
    "architecture": (
        "architecture.md",
        "Architecture",
        "Developers: the code's layout and how data flows through it.",
    ),
}


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    page = page_selectors.home_page(user=request.user)
    return render(request, "pages/home.html", {"page": page, "nav_section": "home"})


@require_safe
def favicon(request: HttpRequest) -> HttpResponse:
    """``/favicon.ico``, which browsers ask for on the pages that name no icon (the admin,
    Swagger UI): the site's icon (a 404 there was an error in every admin page's console)."""
    return HttpResponseRedirect(static("favicon.svg"))


@require_safe
def tournament_list(request: HttpRequest) -> HttpResponse:
    page = page_selectors.tournament_list_page(
        user=request.user,
        status=request.GET.get("status", ""),
        game=request.GET.get("game", ""),
        page=request.GET.get("page"),
    )
    return render(
        request, "pages/tournament_list.html", {"page": page, "nav_section": "tournaments"}
    )


@require_safe
def tournament_detail(request: HttpRequest, pk: int) -> HttpResponse:
    page = page_selectors.tournament_page(
        tournament_id=pk, user=request.user, page=request.GET.get("page")
    )
    enter = member_selectors.entry_offer(user=request.user, tournament=page.tournament)
    return render(
        request,
        "pages/tournament_detail.html",
        {"page": page, "enter": enter, "nav_section": "tournaments"},
    )


@require_safe
def round_detail(request: HttpRequest, pk: int, number: int) -> HttpResponse:
    page = page_selectors.round_page(
        tournament_id=pk, number=number, user=request.user, page=request.GET.get("page")
    )
    return render(request, "pages/round_detail.html", {"page": page, "nav_section": "tournaments"})


@require_safe
def tournament_crosstable(request: HttpRequest, pk: int) -> HttpResponse:
    page = page_selectors.crosstable_page(
        tournament_id=pk,
        user=request.user,
        rows=request.GET.get("rows"),
        columns=request.GET.get("columns"),
    )
    return render(
        request, "pages/tournament_crosstable.html", {"page": page, "nav_section": "tournaments"}
    )


@require_safe
def tournament_live(request: HttpRequest, pk: int) -> HttpResponse:
    """The progress and standings of a tournament, for the polling of its page: 204 when
    nothing changed since the version the page shows, 286 (htmx: stop polling) once the
    tournament is no longer running."""
    live = page_selectors.tournament_live(
        tournament_id=pk,
        user=request.user,
        since=request.GET.get("since"),
        page=request.GET.get("page"),
    )
    if live is None:
        return HttpResponse(status=204)
    context: dict[str, Any] = {"live": live}
    page = page_selectors.tournament_page_after(live=live, since=request.GET.get("since"))
    if page is not None:
        enter = member_selectors.entry_offer(user=request.user, tournament=page.tournament)
        context.update(page=page, enter=enter)
    response = render(request, "pages/includes/tournament_live_answer.html", context)
    if not live.progress.live:
        stop = HttpResponseStopPolling(response.content)
        return stop
    return response


@require_safe
def table_detail(request: HttpRequest, pk: int) -> HttpResponse:
    page = page_selectors.table_page(
        table_id=pk,
        user=request.user,
        page=request.GET.get("page"),
        faults_page=request.GET.get("faults"),
    )
    return render(request, "pages/table_detail.html", {"page": page, "nav_section": "tournaments"})


@require_safe
def bot_detail(request: HttpRequest, pk: int) -> HttpResponse:
    page = page_selectors.bot_page(
        bot_id=pk,
        user=request.user,
        page=request.GET.get("page"),
        versions_page=request.GET.get("versions"),
    )
    return render(request, "pages/bot_detail.html", {"page": page, "nav_section": "rankings"})


@require_safe
def rankings(request: HttpRequest) -> HttpResponse:
    page = page_selectors.rankings_page(
        family=request.GET.get("family", ""), page=request.GET.get("page")
    )
    return render(request, "pages/rankings.html", {"page": page, "nav_section": "rankings"})


@require_safe
def deal_audit(request: HttpRequest, pk: int) -> HttpResponse:
    page = page_selectors.deal_audit_page(deal_id=pk, user=request.user)
    return render(request, "pages/deal_audit.html", {"page": page, "nav_section": "tournaments"})


@require_safe
def tournament_audit(request: HttpRequest, pk: int) -> HttpResponse:
    page = page_selectors.tournament_audit_page(tournament_id=pk, user=request.user)
    return render(
        request, "pages/tournament_audit.html", {"page": page, "nav_section": "tournaments"}
    )


@require_safe
def docs_index(request: HttpRequest) -> HttpResponse:
    guides = [(slug, title, audience) for slug, (_, title, audience) in DOCS.items()]
    return render(request, "pages/docs.html", {"guides": guides, "nav_section": "docs"})


@require_safe
def docs_page(request: HttpRequest, slug: str) -> HttpResponse:
    """A guide of docs/, its Markdown rendered (page_selectors.docs)."""
    if slug not in DOCS:
        raise Http404("no such guide")
    filename, title, audience = DOCS[slug]
    path = Path(settings.BASE_DIR) / "docs" / filename
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise Http404("this guide is not installed here") from None
    guides = {name: reverse("tournaments:docs-page", args=[s]) for s, (name, _, _) in DOCS.items()}
    guides.update(examples.served_files())
    html = guide_html(text=text, guides=guides, base=posixpath.dirname(filename))
    section = "api" if slug == "api" else "docs"  # the main menu has an API entry
    context = {"title": title, "audience": audience, "html": html, "nav_section": section}
    return render(request, "pages/docs_page.html", context)


@require_safe
def docs_example(request: HttpRequest, folder: str) -> HttpResponse:
    """An example bot: its files, how to try it and upload it (page_selectors.examples)."""
    page = examples.example_page(folder=folder)
    return render(request, "pages/docs_example.html", {"page": page, "nav_section": "docs"})


@require_safe
def docs_example_file(request: HttpRequest, folder: str, name: str) -> HttpResponse:
    """A file of an example bot (or a package example's zip), to download."""
    data = examples.example_file(folder=folder, name=name)
    return _download(data, name)


@require_safe
def docs_sdk(request: HttpRequest, name: str) -> HttpResponse:
    """The Python SDK's file, to download."""
    return _download(examples.sdk_file(name=name), name)


def _download(data: bytes, name: str) -> HttpResponse:
    kind = "application/zip" if name.endswith(".zip") else "text/plain; charset=utf-8"
    response = HttpResponse(data, content_type=kind)
    response["Content-Disposition"] = f'attachment; filename="{posixpath.basename(name)}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
