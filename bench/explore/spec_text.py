"""What the throwaway generators of spec variants share (st/gen.py, sk/gen.py, wn/gen.py,
wn/gen8.py): a kernel's text as one of specs/*.ima holds it, and edits of it that must each
apply exactly once (an edit that no longer matches the spec fails instead of leaving a
variant equal to the kernel). A generator runs from its own directory, with the
repository's root as its first argument or three levels up."""
import sys


def kernel(spec, name):
    """(the text before kernel `name` in specs/`spec`, the kernel's own text), as the spec
    is now: a generator written against an earlier spec may no longer apply (its edits
    assert that their text occurs once)."""
    root = sys.argv[1] if len(sys.argv) > 1 else "../../.."
    text = open(f"{root}/specs/{spec}").read()
    i = text.index(f"kernel {name} ")
    j = text.index("\n}\n", i) + 3
    return text[:i], text[i:j]


def constants(before):
    """The `const` lines of the spec text `before` a kernel, which a throwaway spec of the
    kernel holds too."""
    return "".join(line + "\n" for line in before.splitlines() if line.startswith("const "))


def edit(text, pairs):
    """text with each (old, new) of `pairs` replaced, in order; each old must occur once."""
    for old, new in pairs:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text
