"""The Studio's task list: cards newest first, in a list of bounded height that scrolls, with
a count and "Clear finished" above it.

Example:
    tasks = TaskList()
    tasks.add(card)            # shown on top
    tasks.clear_finished()     # drops the cards whose tasks ended; the history keeps them
"""

from __future__ import annotations

import ipywidgets as widgets

from genlab.display import MUTED, text
from genlab.widgets._card import TaskCard

CARD_LIST_HEIGHT = "640px"
"""The cards scroll inside this height; the form and the tabs stay in reach."""


class TaskList(widgets.VBox):  # type: ignore[misc]  # ipywidgets has no type hints
    """Task cards, newest first, closable, cleared when finished.

    Attributes:
        cards: the cards, oldest first.
        card_box: the scrolling box that shows them, newest first.
        count: the line that counts them; clear_button: "Clear finished".
    """

    def __init__(self) -> None:
        super().__init__()
        self.add_class("genlab-tasks")
        self.cards: list[TaskCard] = []
        self.card_box = widgets.VBox(
            # overflow x then y: hidden sideways, scrolling down.
            layout=widgets.Layout(max_height=CARD_LIST_HEIGHT, overflow="hidden auto",
                                  padding="2px", display="block")
        )
        self.card_box.add_class("genlab-cards")
        self.count = widgets.HTML()
        self.clear_button = widgets.Button(
            description="Clear finished", icon="eraser", disabled=True,
            tooltip="Remove the cards of tasks that ended (the history keeps them)",
            layout=widgets.Layout(width="auto"),
        )
        self.clear_button.on_click(lambda _b: self.clear_finished())
        self.children = [
            widgets.HBox([self.count, self.clear_button],
                         layout=widgets.Layout(align_items="center")),
            self.card_box,
        ]
        self.recount()

    def add(self, card: TaskCard) -> None:
        """Show ``card`` on top; it drops itself when closed and recounts when it ends."""
        card.on_finished(self.recount)
        card.on_closed(self.remove)
        self.cards.append(card)
        self.card_box.children = [card, *self.card_box.children]
        self.recount()

    def remove(self, card: TaskCard) -> None:
        """Take ``card`` off the list (its task, if running, keeps running)."""
        if card in self.cards:
            self.cards.remove(card)
        self.card_box.children = [c for c in self.card_box.children if c is not card]
        self.recount()

    def clear_finished(self) -> list[TaskCard]:
        """Remove the cards of tasks that ended (succeeded, failed, refused, stopped);
        returns them. Cards still waiting stay."""
        gone = [card for card in self.cards if card.done]
        for card in gone:
            self.remove(card)
        return gone

    def recount(self) -> None:
        """Redraw the count and the state of "Clear finished"."""
        total = len(self.cards)
        running = sum(1 for card in self.cards if not card.done)
        told = "No tasks yet: submit one above." if not total else (
            f"{total} task{'s' if total != 1 else ''}, newest first"
            + (f"; {running} running" if running else "")
        )
        value = text(told, MUTED, css="margin-right:1em")
        if self.count.value != value:
            self.count.value = value
        self.clear_button.disabled = total == running
