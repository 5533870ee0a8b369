"""What the throwaway generators of spec variants share (st/gen.py, sk/gen.py, wn/gen.py,
wn/gen8.py, and the paged_attn variants'): a kernel's text as one of specs/*.ima holds it,
edits of it that must each apply exactly once (an edit that no longer matches the spec
fails instead of leaving a variant equal to the kernel), and the variant's spec written
where generated-wheel.sh builds it from. A generator runs from its own directory, with the
repository's root as its first argument or three levels up."""
import os
import sys


def root():
    return sys.argv[1] if len(sys.argv) > 1 else "../../.."


def kernel(spec, name):
    """(the text before kernel `name` in specs/`spec`, the kernel's own text), as the spec
    is now: a generator written against an earlier spec may no longer apply (its edits
    assert that their text occurs once)."""
    text = open(f"{root()}/specs/{spec}").read()
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


def write(name, text):
    """Writes the spec `text` as target/explore/`name`.ima, which
    bench/explore/generated-wheel.sh `name` builds a wheel of."""
    out = f"{root()}/target/explore/{name}.ima"
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        f.write(text)
