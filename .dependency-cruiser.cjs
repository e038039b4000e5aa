// The layering of docs/architecture.md §2 Folders and layering, checked by `make lint`: arrows point down only. Each folder of
// src/ sits on a floor; a module may import its own folder and the floors below, never one above
// or a sibling on its own floor. (Floors, low to high: api · runtime · cri · cgroup · resize ·
// inplace · cloneset, agent · cli.)
const floors = [['api'], ['runtime'], ['cri'], ['cgroup'], ['resize'], ['inplace'], ['cloneset', 'agent'], ['cli']];

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

// The pure decision modules (docs/architecture.md §2 Folders and layering: decisions are pure):
// whatever decides a rollout, a status, an in-place step, a resize or the agent's verdict is a
// function of its inputs, so it may not import what does I/O: the controller machinery, the CRI
// client, the cgroup filesystem or Node's fs, child_process and net. A type it needs from one of
// those lives in src/api/ instead (src/api/node.ts, src/api/pod.ts).
const pureDecisionModules = [
  '^src/api/',
  '^src/cloneset/(planner|plan-input|pod-update|rollout-blocked|update|update-order|scale|budget|status|pod-state|pods|intents|revision|selector|refusal-handlers|pod-cache|claims|readiness-conditions)[.]ts$',
  '^src/inplace/(diff|plan|batch-writes|prepull|readiness-gate|container-order)[.]ts$',
  '^src/resize/(?!metrics[.]ts$)',
  '^src/agent/(admission|authorize|decide|order|namespace-limits|triggers|prepull-plan|prestop-plan)[.]ts$',
  '^src/cri/(convert|wire)[.]ts$',
];
const ioModules = ['^src/runtime/', '^src/cri/client[.]ts$', '^src/cgroup/', '^(node:)?(fs|fs/promises|child_process|net)$'];

module.exports = {
  forbidden: [
    ...forbidden,
    {
      name: 'pure-decisions-import-no-io',
      comment: 'a pure decision module imports no I/O module (runtime, CRI client, cgroups, node:fs/child_process/net); move the type it needs into src/api/',
      severity: 'error',
      from: { path: pureDecisionModules },
      to: { path: ioModules },
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
