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

module.exports = {
  forbidden: [
    ...forbidden,
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
