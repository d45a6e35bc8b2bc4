"""How the page fits a narrow window (900 px): CSS only, no widget depends on the width.

Below 1,200 px the sidebar narrows, the page's margins shrink, the policy views stack
(one full-width view after another), the download buttons wrap instead of being cut, and
wide tables scroll inside their own box.
"""

from __future__ import annotations

NARROW = 1200  # px: below this, three views side by side get under 250 px each

LAYOUT = (
    "<style>"
    '[data-testid="stTable"],[data-testid="stDataFrame"]{overflow-x:auto;max-width:100%}'
    '[data-testid="stDownloadButton"] button{max-width:100%;height:auto}'
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
    "{width:100%!important;flex:1 1 auto!important;min-width:0}"
    '[data-testid="stHorizontalBlock"]:has([data-testid="stDownloadButton"])'
    "{flex-wrap:wrap}"
    '[data-testid="stHorizontalBlock"]:has([data-testid="stDownloadButton"])'
    '>[data-testid="stColumn"]{flex:1 1 260px!important;min-width:260px!important}'
    ".cbx-doc{max-height:60vh}"
    "}"
    "</style>"
)
