import sys

from .cli import main
from .errors import ErrorCode

try:
    code = main()
except KeyboardInterrupt as interrupt:  # Ctrl-C, or a user's plugin raising it
    said = str(interrupt) or "stopped by Ctrl-C (SIGINT)"
    print(f"error: {ErrorCode.INTERRUPTED.value}: {said}", file=sys.stderr)
    code = 130  # a shell's code for SIGINT
sys.exit(code)
