#!/usr/bin/env node
// Prints the import cycles between the top-level modules of a Rust crate's `src/` and exits 1 when
// there is one; then the import circles between files inside one top-level module. A module is a top-level module of src/ (`src/x.rs` and everything under `src/x/`):
// that is the grain at which the layers are meant to point one way, while siblings inside one
// module may use each other freely. An edge is any `crate::x` path (in `use` or inline, grouped
// `use crate::{x, y}` included) or a `super::` path that climbs to the crate root, in code that is
// compiled outside tests: comments, string and char literals and `#[cfg(test)]` items are left out,
// because a unit test may reach any module without that being a layer's dependency.
//
// Inside a module the grain is the file: a file depends on the file that holds the module a path
// names (`crate::`, `super::`, `self::`, or a child declared with `mod x;` and then named `x::`;
// the deepest module with a file of its own, so `crate::a::b::Item` is `a/b.rs` if that exists,
// else `a.rs`). A path into a file's own subtree is no dependency: a parent declares, re-exports
// and composes its children, which may name the items it shares; inside a module the layers are
// between siblings and cousins. A circle between files of different top-level modules is already
// a module cycle and is not repeated.
// File circles fail the run as module cycles do.
//
// Usage: node scripts/check-layers.mjs [SRC_DIR]   (default: src)
// Exit status: 0 no cycle, 1 at least one module cycle or file circle,
// 2 the directory cannot be read.

import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { pathToFileURL } from "node:url";

/** Every `.rs` file under `dir`, as paths relative to it, in a stable order. */
function rustFiles(dir) {
  const out = [];
  const walk = (d) => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith(".rs")) out.push(relative(dir, path).split(sep).join("/"));
    }
  };
  walk(dir);
  return out;
}

/** The module path of a file relative to src/: `a/b.rs` is [a, b]; `lib.rs`/`main.rs` are []. */
function modulePath(file) {
  const parts = file.replace(/\.rs$/, "").split("/");
  const last = parts[parts.length - 1];
  if (parts.length === 1 && (last === "lib" || last === "main")) return [];
  if (last === "mod") parts.pop();
  return parts;
}

/**
 * The source with comments and string/char literals blanked (newlines kept, so offsets still give
 * line numbers). Lifetimes (`'a`) are kept; raw strings (`r#"..."#`) and byte strings included.
 */
function blankNonCode(src) {
  const out = src.split("");
  const blank = (from, to) => {
    for (let k = from; k < to; k++) if (out[k] !== "\n") out[k] = " ";
  };
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    const next = src[i + 1];
    if (c === "/" && next === "/") {
      const end = src.indexOf("\n", i);
      const stop = end === -1 ? src.length : end;
      blank(i, stop);
      i = stop;
    } else if (c === "/" && next === "*") {
      // Block comments nest in Rust.
      let depth = 1;
      let j = i + 2;
      while (j < src.length && depth > 0) {
        if (src[j] === "/" && src[j + 1] === "*") (depth++, (j += 2));
        else if (src[j] === "*" && src[j + 1] === "/") (depth--, (j += 2));
        else j++;
      }
      blank(i, j);
      i = j;
    } else if (/[rb]/.test(c) && !/[A-Za-z0-9_]/.test(src[i - 1] ?? "")) {
      const raw = /^(?:br|r)(#*)"/.exec(src.slice(i, i + 260));
      const bytes = /^b"/.test(src.slice(i, i + 2)) || /^b'/.test(src.slice(i, i + 2));
      if (raw) {
        const close = `"${raw[1]}`;
        const end = src.indexOf(close, i + raw[0].length);
        const stop = end === -1 ? src.length : end + close.length;
        blank(i, stop);
        i = stop;
      } else if (bytes) {
        i = skipQuoted(src, i + 1, blank, i);
      } else i++;
    } else if (c === '"') {
      i = skipQuoted(src, i, blank, i);
    } else if (c === "'") {
      const lit = /^'(?:\\u\{[0-9A-Fa-f]+\}|\\x[0-9A-Fa-f]{2}|\\.|[^\\'\n])'/u.exec(src.slice(i, i + 16));
      if (lit) {
        blank(i, i + lit[0].length);
        i += lit[0].length;
      } else i++;
    } else i++;
  }
  return out.join("");
}

/** Blanks the quoted literal whose opening quote is at `quote`; returns the index after it. */
function skipQuoted(src, quote, blank, start) {
  const q = src[quote];
  let j = quote + 1;
  while (j < src.length && src[j] !== q) j += src[j] === "\\" ? 2 : 1;
  const stop = Math.min(j + 1, src.length);
  blank(start, stop);
  return stop;
}

/** The code with every item under `#[cfg(test)]` blanked: up to its `;`, or its balanced block. */
function blankTestItems(code) {
  const out = code.split("");
  const attr = /#\[cfg\(\s*test\s*\)\]/g;
  let m;
  while ((m = attr.exec(code))) {
    let j = m.index + m[0].length;
    while (j < code.length && code[j] !== ";" && code[j] !== "{") j++;
    if (code[j] === "{") {
      let depth = 0;
      for (; j < code.length; j++) {
        if (code[j] === "{") depth++;
        else if (code[j] === "}" && --depth === 0) break;
      }
    }
    for (let k = m.index; k <= j && k < code.length; k++) if (out[k] !== "\n") out[k] = " ";
    attr.lastIndex = j;
  }
  return out.join("");
}

/** The top-level module names a `{...}` use group starting at `open` names (depth-1 items only). */
function groupHeads(code, open) {
  const heads = [];
  let depth = 0;
  let expectHead = true;
  for (let j = open; j < code.length; j++) {
    const c = code[j];
    if (c === "{") {
      depth++;
      if (depth === 1) expectHead = true;
    } else if (c === "}") {
      if (--depth === 0) break;
    } else if (depth === 1 && c === ",") expectHead = true;
    else if (depth === 1 && expectHead && /[A-Za-z_]/.test(c)) {
      const ident = /^[A-Za-z_][A-Za-z0-9_]*/.exec(code.slice(j))[0];
      heads.push({ name: ident, at: j });
      expectHead = false;
      j += ident.length - 1;
    }
  }
  return heads;
}

/** The code of a file that counts as production: comments, literals and test items blanked. */
function productionCode(src) {
  return blankTestItems(blankNonCode(src));
}

/** The edges one file contributes: `{from, to, line}` between top-level modules, self-edges dropped. */
function moduleEdges(file, code) {
  const path = modulePath(file);
  if (path.length === 0) return [];
  const from = path[0];
  const lineOf = (at) => code.slice(0, at).split("\n").length;
  const edges = [];
  const add = (to, at) => {
    if (to !== from && to !== "self" && to !== "super" && to !== "crate") {
      edges.push({ from, to, line: lineOf(at) });
    }
  };
  // `crate::x` and `crate::{x, y::z}`, not preceded by an identifier character (`$crate`, `mycrate`).
  const crateRe = /(?<![A-Za-z0-9_$])crate\s*::\s*(\{|[A-Za-z_][A-Za-z0-9_]*)/g;
  let m;
  while ((m = crateRe.exec(code))) {
    if (m[1] === "{") for (const head of groupHeads(code, m.index + m[0].length - 1)) add(head.name, head.at);
    else add(m[1], m.index);
  }
  // `super::` chains that climb out of the file's own top-level module reach the crate root.
  const superRe = /(?<![A-Za-z0-9_])((?:super\s*::\s*)+)(\{|[A-Za-z_][A-Za-z0-9_]*)/g;
  while ((m = superRe.exec(code))) {
    const ups = m[1].match(/super/g).length;
    if (path.length - ups > 0) continue; // still inside this top-level module
    if (m[2] === "{") for (const head of groupHeads(code, m.index + m[0].length - 1)) add(head.name, head.at);
    else add(m[2], m.index);
  }
  return edges;
}

/** Strongly connected components of more than one node (Tarjan), each sorted, in a stable order. */
function cycles(nodes, adjacency) {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const strong = (v) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of adjacency.get(v) ?? []) {
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of nodes) if (!idx.has(v)) strong(v);
  return found.sort((a, b) => a[0].localeCompare(b[0]));
}

/** A shortest cycle through `start` inside `members` (breadth-first), as a list of modules. */
function shortestCycle(start, members, adjacency) {
  const inside = new Set(members);
  const parent = new Map([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const w of adjacency.get(v) ?? []) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const path = [];
        for (let x = v; x !== null; x = parent.get(x)) path.unshift(x);
        return [...path, start];
      }
      if (!parent.has(w)) {
        parent.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

/**
 * The module paths a path starting at `at` names, each a list of segments: `a::b::{c, d::e}` is
 * [a, b, c] and [a, b, d, e]; `self` in a group and a `*` glob stop at the prefix. Reading stops at
 * the first token that is no segment (`as`, `<`, `(`, ...). Returns `{paths, end}`.
 */
function pathTree(code, at) {
  let i = at;
  const space = () => {
    while (/\s/.test(code[i] ?? "")) i++;
  };
  space();
  if (code[i] === "{") {
    const paths = [];
    i++;
    for (;;) {
      space();
      if (i >= code.length || code[i] === "}") break;
      const item = pathTree(code, i);
      paths.push(...item.paths);
      i = item.end;
      space();
      while (i < code.length && code[i] !== "," && code[i] !== "}") i++; // `x as y`
      if (code[i] === ",") i++;
    }
    return { paths, end: i + 1 };
  }
  const ident = /^[A-Za-z_][A-Za-z0-9_]*/.exec(code.slice(i, i + 100));
  if (!ident || ident[0] === "self") return { paths: [[]], end: ident ? i + ident[0].length : i };
  i += ident[0].length;
  const sep = /^\s*::\s*/.exec(code.slice(i, i + 100));
  if (!sep || !/[A-Za-z_{]/.test(code[i + sep[0].length] ?? "")) {
    return { paths: [[ident[0]]], end: i };
  }
  const rest = pathTree(code, i + sep[0].length);
  return { paths: rest.paths.map((p) => [ident[0], ...p]), end: rest.end };
}

/** The children a file declares with `mod x;` outside tests. */
function declaredChildren(code) {
  return [...code.matchAll(/(?<![A-Za-z0-9_])mod\s+([A-Za-z_][A-Za-z0-9_]*)\s*;/g)].map((m) => m[1]);
}

/**
 * The edges one file (`file`, relative to src/; `self` is its path as reported) contributes between
 * files: `{from, to, line}`, self-edges dropped. `files` maps a module path joined with `/` (`""`
 * for the crate root) to its file as reported.
 */
function fileEdgesOf(file, self, code, files) {
  const path = modulePath(file);
  const lineOf = (at) => code.slice(0, at).split("\n").length;
  const edges = [];
  const resolve = (segments) => {
    for (let k = segments.length; k > 0; k--) {
      const target = files.get(segments.slice(0, k).join("/"));
      if (target) return target;
    }
    return files.get("");
  };
  // A path into the file's own subtree is no dependency: see the header.
  const own = (segments) => path.every((s, k) => segments[k] === s);
  const follow = (base, from, at) => {
    for (const segments of pathTree(code, from).paths) {
      const full = [...base, ...segments];
      const to = resolve(full);
      if (to && to !== self && !own(full)) edges.push({ from: self, to, line: lineOf(at) });
    }
  };
  let m;
  const crateRe = /(?<![A-Za-z0-9_$])crate\s*::/g;
  while ((m = crateRe.exec(code))) follow([], m.index + m[0].length, m.index);
  const superRe = /(?<![A-Za-z0-9_:])((?:super\s*::\s*)+)/g;
  while ((m = superRe.exec(code))) {
    const ups = m[1].match(/super/g).length;
    follow(path.slice(0, Math.max(0, path.length - ups)), m.index + m[0].length, m.index);
  }
  const selfRe = /(?<![A-Za-z0-9_:])self\s*::/g;
  while ((m = selfRe.exec(code))) follow(path, m.index + m[0].length, m.index);
  for (const child of declaredChildren(code)) {
    const childRe = new RegExp(`(?<![A-Za-z0-9_:.$])${child}\\s*::`, "g");
    while ((m = childRe.exec(code))) follow(path, m.index, m.index);
  }
  return edges;
}

/** The adjacency lists of `edges`, each sorted and without repeats. */
function adjacencyOf(edges, known) {
  const adjacency = new Map();
  for (const { from, to } of edges) {
    if (!known.has(to)) continue;
    if (!adjacency.has(from)) adjacency.set(from, new Set());
    adjacency.get(from).add(to);
  }
  for (const [k, v] of adjacency) adjacency.set(k, [...v].sort());
  return adjacency;
}

/**
 * Reads `srcDir` and returns its top-level module graph `{modules, edges, adjacency, components}`
 * and, as `files`, its file graph in the same shape, whose components are the file circles inside
 * one top-level module (paths in it are joined to `srcDir`).
 */
function analyse(srcDir) {
  const sources = rustFiles(srcDir).map((file) => ({
    file,
    code: productionCode(readFileSync(join(srcDir, file), "utf8")),
  }));
  const files = new Map(sources.map(({ file }) => [modulePath(file).join("/"), join(srcDir, file)]));
  const edges = [];
  const fileEdges = [];
  const modules = new Set();
  for (const { file, code } of sources) {
    const path = modulePath(file);
    if (path.length) modules.add(path[0]);
    edges.push(...moduleEdges(file, code).map((e) => ({ ...e, file: join(srcDir, file) })));
    fileEdges.push(
      ...fileEdgesOf(file, join(srcDir, file), code, files).map((e) => ({ ...e, file: e.from })),
    );
  }
  // An edge to a name that is no module is an external crate named like a path, or a root item.
  const adjacency = adjacencyOf(edges, modules);
  const sorted = [...modules].sort();
  const paths = [...files.values()].sort();
  const fileAdjacency = adjacencyOf(fileEdges, new Set(paths));
  const topOf = (path) => modulePath(relative(srcDir, path).split(sep).join("/"))[0] ?? "";
  const inOneModule = (members) => members.every((f) => topOf(f) === topOf(members[0]));
  return {
    modules: sorted,
    edges,
    adjacency,
    components: cycles(sorted, adjacency),
    files: {
      count: paths.length,
      edges: fileEdges,
      adjacency: fileAdjacency,
      components: cycles(paths, fileAdjacency).filter(inOneModule),
    },
  };
}

/** One block per cycle of `components`: a shortest cycle, its members, each edge where it is made. */
function cycleBlocks(kind, { edges, adjacency, components }) {
  const lines = [];
  for (const members of components) {
    lines.push(`${kind.cycle}: ${shortestCycle(members[0], members, adjacency).join(" -> ")}`);
    lines.push(`  ${kind.members} in it: ${members.join(", ")}`);
    const inside = new Set(members);
    const first = new Map();
    for (const e of edges) {
      const key = `${e.from} -> ${e.to}`;
      if (inside.has(e.from) && inside.has(e.to) && !first.has(key)) first.set(key, `${e.file}:${e.line}`);
    }
    for (const key of [...first.keys()].sort()) lines.push(`  ${key}  (${first.get(key)})`);
  }
  return lines;
}

/**
 * The report for `analyse`'s result: the module cycles (or that there is none), then the file
 * circles when there are any.
 */
function report(result) {
  const lines = result.components.length
    ? cycleBlocks({ cycle: "cycle", members: "modules" }, result)
    : [`no import cycle between the ${result.modules.length} top-level modules`];
  const circles = result.files.components.length;
  if (circles) {
    lines.push(...cycleBlocks({ cycle: "file circle", members: "files" }, result.files));
    lines.push(`${circles} file circle(s) inside a module`);
  }
  return lines.join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const srcDir = process.argv[2] ?? "src";
  let result;
  try {
    result = analyse(srcDir);
  } catch (err) {
    console.error(`check-layers: cannot read ${srcDir}: ${err.message}`);
    process.exit(2);
  }
  console.log(report(result));
  const failed = result.components.length > 0 || result.files.components.length > 0;
  process.exit(failed ? 1 : 0);
}
