"""python3 -m tq COMMAND ...: report (an HTML report of a quantized model)."""
import sys

COMMANDS = {"report": "an HTML report of a quantized model (python3 -m tq report --help)"}


def main(argv):
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        print("usage: python3 -m tq COMMAND ...\n\ncommands:")
        for name, what in COMMANDS.items():
            print(f"  {name:8} {what}")
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    from tq import report
    return report.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
