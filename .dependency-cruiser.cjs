// The layering of docs/architecture.md §2 Folders and layering, checked by `make lint`: arrows point down only. Each folder of
// src/ sits on a floor; a module may import its own folder and the floors below, never one above
// or a sibling on its own floor. (Floors, low to high: api · runtime · cri · cgroup · resize ·
// inplace · workload, agent · cloneset, inplacestatefulset · cli.)
const floors = [['api'], ['runtime'], ['cri'], ['cgroup'], ['resize'], ['inplace'], ['workload', 'agent'], ['cloneset', 'inplacestatefulset'], ['cli']];

const forbidden = floors.flatMap((floor, level) =>
  floor.map((dir) => {
    const allowed = [dir, ...floors.slice(0, level).flat()];
    return {
      name: `${dir}-imports-down-only`,
      comment: `src/${dir}/ may import only ${allowed.map((d) => `src/${d}/`).join(', ')} (docs/architecture.md §2 Folders and layering: arrows point down)`,
      severity: 'error',
      from: { path: `^src/${dir}/` },
      to: { path: '^src/', pathNot: [`^src/(${allowed.join('|')})/`] },
    };
  }),
);

// The pure modules (docs/architecture.md §2 Folders and layering: decisions are pure): every module
// whose header says it is pure. Whatever decides a rollout, a status, an in-place step, a resize or
// the agent's verdict is a function of its inputs, so it may not reach what does I/O — the
// controller machinery, the CRI client, the cgroup filesystem or Node's fs, child_process and
// network modules — by any path of imports, type-only ones included: an import of an impure
// module is refused even when what it imports from there is pure. Move the pure part down instead
// (a shared type into src/api/, a pure function into a pure module beside it). The rule names
// folders, never files: src/api/ and src/resize/ are pure whole, and every other folder keeps its
// pure modules in a pure/ folder of its own (src/cloneset/pure/, src/inplace/pure/, …), so a new
// file there is checked without editing a pattern. A module that says it is pure lives in one.
const pureModules = [
  '^src/api/',
  '^src/resize/',
  '^src/(runtime|cri|cgroup|inplace|workload|cloneset|inplacestatefulset|agent|cli)/pure/',
  '^src/cli/verbs/pure/',
];
// What does I/O. A pure module inside one of these folders (runtime/pure/, cgroup/pure/) is not I/O.
const ioModules = [
  '^src/runtime/',
  '^src/cri/client[.]ts$',
  '^src/cgroup/',
  '^(node:)?(fs|fs/promises|child_process|net|http|https|http2|tls|dgram|dns)$',
];

module.exports = {
  forbidden: [
    ...forbidden,
    {
      name: 'pure-modules-reach-no-io',
      comment:
        'a pure module reaches no I/O module (runtime, CRI client, cgroups, node:fs/child_process/net/http), directly or through other modules; move the pure part it needs into a pure module (a type into src/api/)',
      severity: 'error',
      from: { path: pureModules },
      to: { reachable: true, path: ioModules, pathNot: pureModules },
    },
    {
      name: 'no-cycles',
      comment: 'an import loop makes two modules one; break it with a shared lower module',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
