"""The action table: one list feeds the key bindings, the footer, the help screen and the palette.

Each action belongs to a scope: ``app`` (anywhere) or one view (``pairs``, ``history``,
``registry``, ``conflicts``, ``vocab``, ``notes``, ``plan``...). A view's bindings are
built from its rows here; the command palette lists every row and, for a view's
action, first shows that view and then runs the action on it.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding


@dataclass(frozen=True)
class Action:
    scope: str  # "app" or the id of the view that runs it
    action: str  # a Textual action string run on the scope's node
    title: str  # the palette's title
    help: str  # one line: what it does
    key: str | None = None  # the binding (None: palette only)
    key_display: str | None = None
    show: bool = True  # shown in the footer
    words: str = ""  # what an operator may type in the palette besides the title ("undo", "load"...)


APP = "app"

ACTIONS: tuple[Action, ...] = (
    # --- anywhere ---
    Action(
        APP,
        "show_view('pairs')",
        "Go to subjects and pairs",
        "The selected subject's pairs and their answers",
        "1",
        "1-7",
    ),
    Action(
        APP,
        "show_view('history')",
        "Go to pair history",
        "Every step of the selected pair, with a timeline",
        "2",
        show=False,
    ),
    Action(
        APP, "show_view('explain')", "Go to explain", "Why the selected pair answers what it answers", "3", show=False
    ),
    Action(APP, "show_view('diff')", "Go to diff", "Answers that differ between two instants", "4", show=False),
    Action(
        APP,
        "show_view('registry')",
        "Go to registry",
        "Predicates, their definitions, the registry log and lint",
        "5",
        show=False,
    ),
    Action(
        APP, "show_view('queues')", "Go to review queues", "Conflicts, the vocabulary inbox and notes", "6", show=False
    ),
    Action(
        APP, "show_view('plan')", "Go to plan tray", "The staged plan, its preview, apply or discard", "7", show=False
    ),
    Action(APP, "show_view('conflicts')", "Go to conflicts", "Values held under two or more predicates now"),
    Action(APP, "show_view('vocab')", "Go to the vocabulary inbox", "Names agents invented; near-duplicate clusters"),
    Action(APP, "show_view('notes')", "Go to notes", "Notes held now and clusters worth promoting"),
    Action(
        APP,
        "step_pair(-1)",
        "Previous pair",
        "The pair above in the subject's list (in any view)",
        "left_square_bracket",
        "[",
        words="up previous pair",
    ),
    Action(
        APP,
        "step_pair(1)",
        "Next pair",
        "The pair below in the subject's list (in any view)",
        "right_square_bracket",
        "]",
        words="down next pair",
    ),
    Action(APP, "focus_subjects", "Filter subjects", "Type a subject name prefix to narrow the list", "f", show=False),
    Action(
        APP,
        "toggle_sidebar",
        "Show or hide the subjects",
        "The sidebar of subjects (hidden at first below 100 columns)",
        "b",
        show=False,
    ),
    Action(
        APP,
        "focus_search",
        "Search memory",
        "Search statements with the engine's search (keywords and meaning)",
        "slash",
        "/",
    ),
    Action(
        APP,
        "focus_as_of",
        "Set the as-of instant",
        "Re-fold every answer as of an instant (blank: now)",
        "a",
        show=False,
    ),
    Action(
        APP,
        "focus_known_at",
        "Set the known-at instant",
        "History, explain and diff answer as a read then did: only what was recorded by then (blank: everything)",
        "K",
        show=False,
        words="recorded answered given then",
    ),
    Action(
        APP, "clear_as_of", "Back to now", "Clear the as-of and known-at instants: answers as of now", "n", show=False
    ),
    Action(
        APP, "refresh", "Refresh", "Re-read the store (another process may have written)", "ctrl+r", "^r", show=False
    ),
    Action(APP, "leave", "Back", "Leave an input, or close the search results", "escape", "esc", show=False),
    Action(APP, "help", "Help: keys", "Every key and action, by view", "question_mark", "?"),
    Action(APP, "quit", "Quit", "Leave the console", "q", show=False),
    # --- pairs ---
    Action("pairs", "open_history", "Open the pair's history", "Show every step of the highlighted pair", "enter", "⏎"),
    Action(
        "pairs", "explain", "Explain the pair's answer", "Events, the rule that decided it, the registry events", "e"
    ),
    # --- history ---
    Action("history", "explain", "Explain this pair", "Why the pair answers what it answers at the as-of instant", "e"),
    Action(
        "history",
        "answer_then",
        "Answer as given then",
        "Explain the answer a read gave right after the highlighted step was recorded (known at and as of then)",
        "g",
        show=False,
    ),
    # --- diff ---
    Action("diff", "edit", "Type the instants", "Focus From (then To and the subject; Enter compares)", "i"),
    Action("diff", "compare", "Compare two instants", "Every answer that differs between From and To", "c"),
    # --- registry ---
    Action(
        "registry",
        "redefine",
        "Stage a redefine",
        "Change the highlighted predicate's rules (a plan)",
        "e",
        words="edit change cardinality excludes allowed historical retroactive",
    ),
    Action(
        "registry",
        "merge",
        "Stage a merge",
        "Merge the highlighted predicate into another (a plan)",
        "m",
        words="combine alias rename",
    ),
    Action(
        "registry", "split", "Stage a split", "Split a merged name back out (a plan)", "s", words="unmerge separate"
    ),
    Action(
        "registry",
        "define",
        "Stage a define",
        "Declare a new predicate (a plan)",
        "d",
        words="new add create predicate",
    ),
    Action(
        "registry",
        "load",
        "Load a registry",
        "Stage a starter (coding, support...) or a registry file (a plan)",
        "l",
        words="load starter yaml file import coding support sales voice personal",
    ),
    Action(
        "registry",
        "revert",
        "Revert an applied plan",
        "Stage the plan that undoes the highlighted log entry's plan",
        "u",
        words="revert undo rollback",
    ),
    Action(
        "registry",
        "fix",
        "Stage what a lint finding suggests",
        "Merge near-duplicates, or never merge them",
        "x",
        words="lint fix finding merge never",
    ),
    Action(
        "registry",
        "filter",
        "Filter by name",
        "Narrow the predicates and the registry log (name, operator)",
        "f",
        words="search find name operator",
    ),
    Action("registry", "next_tab", "Next registry tab", "Predicates, registry log, lint", "greater_than_sign", ">"),
    Action(
        "registry",
        "prev_tab",
        "Previous registry tab",
        "Predicates, registry log, lint",
        "less_than_sign",
        "<",
        show=False,
    ),
    # --- queues ---
    Action("queues", "next_tab", "Next queue", "Conflicts, vocabulary, notes", "greater_than_sign", ">"),
    Action("queues", "prev_tab", "Previous queue", "Conflicts, vocabulary, notes", "less_than_sign", "<", show=False),
    # --- conflicts ---
    Action(
        "conflicts",
        "keep",
        "Confirm a conflict: keep one",
        "Keep one predicate's value, withdraw the others (a plan)",
        "k",
        words="confirm resolve keep",
    ),
    Action(
        "conflicts",
        "exclude",
        "Exclude: settle the group",
        "Add the exclusion between the predicates (a plan)",
        "x",
        words="exclusion settle",
    ),
    Action(
        "conflicts",
        "dismiss",
        "Dismiss a conflict",
        "Hide it until either belief changes (a review decision)",
        "d",
        words="dismiss ignore hide",
    ),
    Action(
        "conflicts",
        "show_dismissed",
        "List dismissed conflicts too",
        "Show or hide the dismissed conflicts (marked ✕)",
        "t",
        words="dismissed hidden all show list toggle",
    ),
    Action(
        "conflicts",
        "undismiss",
        "Undismiss a conflict",
        "Show a dismissed conflict again (a review decision)",
        "u",
        words="undismiss restore unhide reopen again",
    ),
    # --- vocabulary ---
    Action("vocab", "merge", "Stage a suggested merge", "Merge the highlighted near-duplicate cluster (a plan)", "m"),
    Action(
        "vocab",
        "split",
        "Stage a split of a matched name",
        "Undo an automatic match (a plan)",
        "s",
        words="unmerge unmatch separate",
    ),
    Action(
        "vocab",
        "never",
        "Never suggest this merge",
        "Record that these names stay apart (a review decision)",
        "v",
        words="never apart reject dismiss",
    ),
    # --- notes ---
    Action(
        "notes",
        "promote",
        "Stage a note promotion",
        "Promote the highlighted cluster's notes into a predicate (a plan)",
        "p",
        words="promote cluster notes",
    ),
    Action(
        "notes",
        "promote_note",
        "Promote one note",
        "Promote the highlighted note with a value you give (a plan)",
        "o",
        words="promote single note value",
    ),
    Action(
        "notes",
        "promote_match",
        "Promote notes by regex",
        "Promote every note a regular expression matches (a plan)",
        "r",
        words="promote regex match pattern notes",
    ),
    # --- plan tray ---
    Action(
        "plan",
        "apply",
        "Apply the staged plan",
        "Append exactly the previewed events, after a confirmation",
        "A",
        "A",
        words="apply write commit",
    ),
    Action(
        "plan",
        "discard",
        "Discard the staged plan",
        "Drop the plan; nothing is written",
        "D",
        "D",
        words="discard drop cancel remove",
    ),
    Action(
        "plan",
        "replan",
        "Re-plan",
        "Compute the plan again against the store as it is now",
        "R",
        "R",
        words="replan refresh stale",
    ),
    Action("plan", "compare_as_of", "Compare answers as of…", "Preview also compares the answers at an instant", "c"),
    Action(
        "plan",
        "compare_known_at",
        "Compare with what was answered at…",
        "Beside each change, what a read at a known-at instant answered (only what was recorded by then)",
        "k",
        words="known-at answered then given said compare",
    ),
    Action(
        "plan",
        "save",
        "Save the plan to a file",
        "Write the previewed plan as JSON (the CLI's --plan-out format)",
        "S",
        "S",
        words="save export write file plan-out",
    ),
    Action(
        "plan",
        "open_file",
        "Open a plan file",
        "Stage a plan saved with --plan-out (or S), to preview and apply",
        "O",
        "O",
        words="load open import file apply",
    ),
)


def actions_for(scope: str) -> list[Action]:
    return [a for a in ACTIONS if a.scope == scope]


def bindings(scope: str) -> list[Binding | tuple[str, str] | tuple[str, str, str]]:
    """Textual bindings for one scope, from the table.

    A view's bindings start with help: the footer lists the focused view's keys before the app's,
    and cuts what does not fit (80 columns hold 5 to 7 keys), so help comes first, where it is
    always shown; the help screen lists every key."""
    out: list[Binding | tuple[str, str] | tuple[str, str, str]] = []
    if scope != APP:
        out.append(Binding("question_mark", "app.help", "Help", key_display="?"))
    for a in actions_for(scope):
        if a.key is None:
            continue
        out.append(Binding(a.key, a.action, _short(a), show=a.show, key_display=a.key_display))
    return out


def _short(a: Action) -> str:
    """The footer's label: a few words."""
    short = {
        "show_view('pairs')": "Views",
        "show_view('history')": "History",
        "show_view('explain')": "Explain",
        "show_view('diff')": "Diff",
        "show_view('registry')": "Registry",
        "show_view('queues')": "Queues",
        "show_view('plan')": "Plan",
        "focus_search": "Search",
        "compare_known_at": "Answered at",
        "help": "Help",
        "open_history": "History",
        "explain": "Explain",
        "prev_pair": "Prev",
        "next_pair": "Next",
        "compare": "Compare",
        "redefine": "Redefine",
        "merge": "Merge",
        "split": "Split",
        "define": "Define",
        "keep": "Keep one",
        "exclude": "Exclude",
        "dismiss": "Dismiss",
        "undismiss": "Undismiss",
        "show_dismissed": "Dismissed",
        "never": "Never merge",
        "promote": "Promote",
        "apply": "Apply",
        "discard": "Discard",
        "load": "Load",
        "revert": "Revert",
        "fix": "Fix",
        "filter": "Filter",
        "promote_note": "One note",
        "promote_match": "Regex",
        "save": "Save",
        "open_file": "Open file",
        "step_pair(-1)": "Prev",
        "step_pair(1)": "Next",
        "replan": "Re-plan",
        "compare_as_of": "As-of compare",
        "refresh": "Refresh",
        "quit": "Quit",
        "focus_subjects": "Filter",
        "focus_as_of": "As of",
        "clear_as_of": "Now",
        "leave": "Back",
        "edit": "Instants",
        "next_tab": "Next tab",
        "prev_tab": "Prev tab",
        "toggle_sidebar": "Subjects",
    }
    return short.get(a.action, a.title)
