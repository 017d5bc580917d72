// Projection benchmark: builds and runs examples/bench_projection.rs (release), which times
// JMESPath and jq projection of a 16 MB list response and runaway jq programs against the budget.
import { execFileSync } from 'node:child_process';

execFileSync('cargo', ['run', '--quiet', '--release', '--example', 'bench_projection'], { stdio: 'inherit' });
