import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config';
import { SEARCH_ATTRIBUTE_NAMES } from '../../workflows/shared';

// No Docker engine runs on our machines, so the compose file and Dockerfile are checked by reading.
interface ComposeService {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string | number>;
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
}

const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
};
const services = compose.services;
/** The environment as compose passes it when the shell sets nothing: `${VAR:-default}` → default. */
const env = (name: string) =>
  Object.fromEntries(
    Object.entries(services[name]?.environment ?? {}).map(([k, v]) => [
      k,
      String(v).replace(/\$\{\w+:-([^}]*)\}/g, '$1'),
    ]),
  );

describe('docker-compose.yml', () => {
  it('when parsed, then it has MongoDB 7, Temporal with its UI, the API and a worker', () => {
    expect(services.mongodb?.image).toBe('mongo:7');
    expect(services.temporal?.image).toMatch(/^temporalio\/auto-setup:/);
    expect(services['temporal-ui']?.image).toMatch(/^temporalio\/ui:/);
    expect(services.api?.build).toBe('.');
    expect(services.worker?.image).toBe(services.api?.image);
  });

  it('when the API and worker start, then their commands are the built entry points', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(services.api?.command).toEqual(pkg.scripts['start:api']!.split(' '));
    expect(readFileSync('Dockerfile', 'utf8')).toContain(
      `CMD ${JSON.stringify(pkg.scripts['start:api']!.split(' '))}`.replace(/","/g, '", "'),
    );
    expect(services.worker?.command).toEqual(['node', 'dist/src/worker.js']);
    expect(existsSync('src/main.ts') && existsSync('src/worker.ts')).toBe(true);
  });

  it.each(['api', 'worker'])(
    'when %s reads its environment, then the config is valid and known',
    (name) => {
      const vars = env(name);
      expect(Object.keys(vars).filter((k) => !CONFIG_VARIABLES.includes(k))).toEqual([]);
      expect(() => loadConfig(vars)).not.toThrow();
      expect(vars.TEMPORAL_ADDRESS).toBe('temporal:7233');
    },
  );

  it('when the stack starts, then every search attribute the workflows use is registered', () => {
    const setup = (services['temporal-setup']?.command ?? []).join('\n');
    for (const name of SEARCH_ATTRIBUTE_NAMES) expect(setup).toContain(name);
  });

  it('when services depend on others or on volumes, then those are all declared', () => {
    for (const service of Object.values(services)) {
      for (const dep of Object.keys(service.depends_on ?? {}))
        expect(services).toHaveProperty([dep]);
      for (const volume of service.volumes ?? []) {
        expect(compose.volumes).toHaveProperty([volume.split(':')[0]!]);
      }
    }
  });
});

describe('Dockerfile', () => {
  it('when it copies sources, then each exists and the build script is the one in package.json', () => {
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) =>
      m[1]!.split(' '),
    );
    for (const path of copied) expect(existsSync(path)).toBe(true);
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(dockerfile).toContain('npm run build');
    expect(pkg.scripts.build).toBeDefined();
  });
});

describe('README', () => {
  it('when it documents configuration, then every setting is in its table', () => {
    const readme = readFileSync('README.md', 'utf8');
    for (const name of CONFIG_VARIABLES) expect(readme).toContain(`| \`${name}\``);
  });
});
