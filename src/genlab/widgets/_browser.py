"""The two things only the browser can do for a widget: copy text to the clipboard, and bring
a new card into view.

ipywidgets has no clipboard and no "scroll to": a kernel cannot reach either. The HTML widget
puts its value into the page as markup, and its inline event handlers run there, so a
``<button onclick>`` writes to the clipboard from the click itself (which browsers require),
and a one-off ``<img onerror>`` scrolls once. Both work where the notebook's saved widget
state is shown again without a kernel. Everything in the markup is escaped; only the
scripts below run.

Example:
    >>> markup = copy_button("record = client.generate(**{'model': 'video-a'})")
    >>> "navigator.clipboard.writeText" in markup and "&#x27;video-a&#x27;" in markup
    True
"""

from __future__ import annotations

import time

from genlab.display import MUTED, escape

# The click copies the button's data-code. navigator.clipboard needs a secure context
# (https, or localhost); elsewhere the older execCommand copy of a selected text area does it.
# Where neither may copy, the code below the button opens, selected, to copy by hand.
_COPY = """
(function (b) {
  var code = b.dataset.code, label = b.querySelector('.genlab-copy-label');
  var said = function (words) {
    label.textContent = words;
    setTimeout(function () { label.textContent = b.dataset.label; }, 2500);
  };
  var by_hand = function () {
    var pre = b.parentElement.querySelector('.genlab-copy-code');
    pre.style.display = 'block';
    var range = document.createRange(); range.selectNodeContents(pre);
    var sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
    said('Press Ctrl+C to copy');
  };
  var old_way = function () {
    var area = document.createElement('textarea');
    area.value = code; area.setAttribute('readonly', '');
    area.style.position = 'fixed'; area.style.opacity = '0';
    document.body.appendChild(area); area.select();
    var ok = false;
    try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
    area.remove();
    if (ok) { said('Copied'); } else { by_hand(); }
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(code).then(function () { said('Copied'); }, old_way);
  } else {
    old_way();
  }
})(this)
"""

# Runs once where the kernel just asked for it (a saved notebook opened later does not
# scroll): waits, up to about 5 s, for the card list to hold `count` cards, then brings
# the newest (the first) into view.
_REVEAL = """
(function (img) {
  if (Math.abs(Date.now() / 1000 - Number(img.dataset.asked)) > 30) return;
  var studio = img.closest('.genlab-studio');
  var tries = 0;
  var look = function () {
    var list = studio && studio.querySelector('.genlab-cards');
    var cards = list ? list.querySelectorAll(':scope > .genlab-card') : [];
    if (cards.length >= Number(img.dataset.count)) {
      cards[0].scrollIntoView({block: 'nearest'});
    } else if (tries++ < 100) {
      setTimeout(look, 50);
    }
  };
  look();
})(this)
"""


def _script(source: str) -> str:
    """A handler's source on one line, escaped for a double-quoted attribute."""
    return escape(" ".join(line.strip() for line in source.strip().splitlines()))


def copy_button(code: str, label: str = "Copy as code") -> str:
    """A button that copies ``code`` to the clipboard when clicked, looking like the
    widgets' own buttons; the code is below it, shown only where the browser may not copy."""
    return (
        f'<button class="jupyter-button widget-button genlab-copy" type="button" '
        f'title="Copy the Python that sends this request again" '
        f'data-label="{escape(label)}" data-code="{escape(code)}" '
        f'onclick="{_script(_COPY)}">'
        f'<i class="fa fa-copy"></i> <span class="genlab-copy-label">{escape(label)}</span>'
        f"</button>"
        f'<pre class="genlab-copy-code" style="display:none;white-space:pre-wrap;'
        f'user-select:text;color:{MUTED}">{escape(code)}</pre>'
    )


def reveal_newest_card(count: int) -> str:
    """Markup that brings the newest card into view once the list holds ``count`` cards."""
    return (
        f'<img src="data:," alt="" style="display:none" data-count="{count}" '
        f'data-asked="{time.time():.3f}" onerror="{_script(_REVEAL)}">'
    )
