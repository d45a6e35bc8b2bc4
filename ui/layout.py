"""How the page fits its window: CSS only, no widget depends on the width.

Side by side, each view keeps a readable width (`MIN_VIEW_PX`); more views than fit in
a row go on to the next one, none cut and none hidden. Table cells wrap long words so a
table fits its place; a search hit's snippet keeps `SNIPPET_PX`. While the server
computes a rerun, a notice stays in view at the top of the window (after a moment, so
quick reruns do not flash it).

Below 1,200 px the sidebar narrows, the page's margins shrink, the policy views stack
(one full-width view after another), the download buttons wrap instead of being cut, and
wide tables scroll inside their own box.
"""

from __future__ import annotations

NARROW = 1200  # px: below this, three views side by side get under 250 px each
MIN_VIEW_PX = 340  # a view narrower than this wraps its lines every few words
SNIPPET_PX = 260  # a search hit's snippet: readable; the hits table scrolls if it must

LAYOUT = (
    "<style>"
    '[data-testid="stTable"],[data-testid="stDataFrame"]{overflow-x:auto;max-width:100%}'
    '[data-testid="stDownloadButton"] button{max-width:100%;height:auto}'
    '[data-testid="stHorizontalBlock"]:has(.cbx-view){display:grid!important;'
    f"grid-template-columns:repeat(auto-fill,minmax({MIN_VIEW_PX}px,1fr));gap:1rem}}"
    '[data-testid="stHorizontalBlock"]:has(.cbx-view)>[data-testid="stColumn"]'
    "{width:auto!important;min-width:0!important;flex:none!important}"
    '[data-testid="stTable"] table{max-width:100%}'
    '[data-testid="stTable"] th,[data-testid="stTable"] td{overflow-wrap:anywhere;'
    "white-space:normal!important}"
    f".st-key-search_hits td:last-child{{min-width:{SNIPPET_PX}px}}"
    '[data-testid="stFileChip"]{min-width:0;max-width:100%}'
    '[data-testid="stFileChip"]>div{min-width:0;overflow:hidden}'
    '[data-testid="stFileChipName"]{min-width:0;overflow:hidden;text-overflow:ellipsis}'
    '[data-testid="stApp"][data-test-script-state="running"]::after{'
    'content:"Computing… the page updates when it is done";position:fixed;top:.6rem;'
    "left:50%;transform:translateX(-50%);z-index:1000100;background:#0d47a1;color:#fff;"
    "font:600 14px/1.4 sans-serif;padding:6px 14px;border-radius:16px;"
    "box-shadow:0 2px 8px rgba(0,0,0,.25);opacity:0;animation:cbx-busy 0s .3s forwards}"
    "@keyframes cbx-busy{to{opacity:1}}"
    ".cbx-scrollhint{display:none}"
    '[data-testid="stDownloadButton"] button *{white-space:normal!important;'
    "overflow:visible!important;text-overflow:clip!important}"
    f"@media (max-width:{NARROW}px){{"
    '[data-testid="stSidebar"]{min-width:220px!important;max-width:220px!important;'
    "width:220px!important}"
    '[data-testid="stMainBlockContainer"]{padding-left:1.25rem;padding-right:1.25rem;'
    "max-width:100%}"
    "h1{font-size:2rem!important}"
    '[data-testid="stHorizontalBlock"]:has(.cbx-view){flex-direction:column}'
    '[data-testid="stHorizontalBlock"]:has(.cbx-view)>[data-testid="stColumn"]'
    "{width:100%!important;flex:1 1 auto!important;min-width:0!important}"
    '[data-testid="stHorizontalBlock"]:has([data-testid="stDownloadButton"])'
    "{flex-wrap:wrap}"
    '[data-testid="stHorizontalBlock"]:has([data-testid="stDownloadButton"])'
    '>[data-testid="stColumn"]{flex:1 1 260px!important;min-width:260px!important}'
    ".cbx-scrollhint{display:block;font:12px/1.5 sans-serif;color:#555}"
    '[data-testid="stHorizontalBlock"]:has(.st-key-flag_colours){flex-wrap:wrap}'
    '[data-testid="stHorizontalBlock"]:has(.st-key-flag_colours)>[data-testid="stColumn"]'
    "{flex:1 1 100%!important;min-width:100%!important}"
    ".cbx-doc{max-height:60vh}"
    '[data-testid="stTable"] th,[data-testid="stTable"] td'
    "{padding:.3rem .35rem!important;font-size:.85rem}"
    "}"
    "</style>"
)
