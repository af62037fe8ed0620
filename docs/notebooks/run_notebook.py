#!/usr/bin/env python3
"""Execute a Jupyter notebook in place, keeping its outputs, without Jupyter.

    python3 docs/notebooks/run_notebook.py docs/notebooks/breakdown.ipynb

Code cells run in order in one namespace, in the notebook's directory. Each
cell's stdout and stderr become stream outputs, the value of a final
expression an execute_result (text/plain, and text/html when the value has
_repr_html_, as pandas frames do), and every matplotlib figure left open a
display_data image/png. Only the standard library, plus matplotlib when a
cell uses it. The first failing cell stops the run with its traceback
recorded and exit status 1. Use nbconvert/nbclient where Jupyter is
installed; this is for machines without it.
"""
import ast
import base64
import contextlib
import io
import json
import os
import sys
import traceback


def _figures():
    if "matplotlib.pyplot" not in sys.modules:
        return []
    plt = sys.modules["matplotlib.pyplot"]
    out = []
    for num in plt.get_fignums():
        fig = plt.figure(num)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
        out.append({
            "output_type": "display_data",
            "data": {"image/png": base64.b64encode(buf.getvalue()).decode("ascii"), "text/plain": [repr(fig)]},
            "metadata": {},
        })
    plt.close("all")
    return out


def _lines(text):
    return text.splitlines(keepends=True)


def run_cell(source, ns, count):
    outputs = []
    tree = ast.parse(source, mode="exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    out, err = io.StringIO(), io.StringIO()
    value, error = None, None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            exec(compile(tree, f"<cell {count}>", "exec"), ns)
            if last is not None:
                value = eval(compile(last, f"<cell {count}>", "eval"), ns)
        except Exception as e:  # noqa: BLE001 - recorded in the notebook
            error = e
    for name, buf in (("stdout", out), ("stderr", err)):
        if buf.getvalue():
            outputs.append({"output_type": "stream", "name": name, "text": _lines(buf.getvalue())})
    if error is not None:
        outputs.append({
            "output_type": "error",
            "ename": type(error).__name__,
            "evalue": str(error),
            "traceback": traceback.format_exception(error),
        })
        return outputs, False
    outputs.extend(_figures())
    if value is not None:
        data = {"text/plain": _lines(repr(value))}
        if hasattr(value, "_repr_html_"):
            html = value._repr_html_()
            if html:
                data["text/html"] = _lines(html)
        outputs.append({"output_type": "execute_result", "execution_count": count, "data": data, "metadata": {}})
    return outputs, True


def main(path):
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    os.chdir(os.path.dirname(os.path.abspath(path)))
    os.environ.setdefault("MPLBACKEND", "Agg")
    ns = {"__name__": "__main__"}
    count, ok = 0, True
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        if not ok:
            cell["outputs"], cell["execution_count"] = [], None
            continue
        count += 1
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        cell["outputs"], ok = run_cell(src, ns, count)
        cell["execution_count"] = count
        print(f"cell {count}: {'ok' if ok else 'FAILED'}", file=sys.stderr)
    nb.setdefault("metadata", {})["language_info"] = {"name": "python", "version": sys.version.split()[0]}
    with open(os.path.basename(path), "w", encoding="utf-8") as f:
        json.dump(nb, f, indent=1, ensure_ascii=False)
        f.write("\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
