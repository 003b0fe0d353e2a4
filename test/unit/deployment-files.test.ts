import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import dockerignore from '@balena/dockerignore';
import Ajv from 'ajv';
import draft07 from 'ajv/dist/refs/json-schema-draft-07.json';
import { validate as lintDockerfile } from 'dockerfile-utils';
import { parse } from 'yaml';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config';
import { SEARCH_ATTRIBUTE_NAMES } from '../../workflows/shared';

// No container engine runs on our machines, so the deployment files are checked with the tools an
// engine would apply: the Compose specification's schema, .dockerignore's matching rules applied to
// the Dockerfile's COPY sources, and a Dockerfile linter.
interface ComposeService {
  image?: string;
  build?: string;
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string | number>;
  env_file?: string;
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
  ports?: string[];
  networks?: string[];
  restart?: string;
  healthcheck?: { test: string[] };
  deploy?: { replicas?: number };
}

const composeText = readFileSync('docker-compose.yml', 'utf8');
const compose = parse(composeText, { merge: true }) as {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
  networks: Record<string, { internal?: boolean }>;
};
const services = compose.services;
const service = (name: string) => services[name]!;
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
  scripts: Record<string, string>;
};

/** KEY=value lines of an env file; comments and blank lines skipped. */
function envFile(path: string): Record<string, string> {
  return Object.fromEntries(
    readFileSync(path, 'utf8')
      .split('\n')
      .filter((line) => /^[A-Z_][A-Z0-9_]*=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}
const example = envFile('.env.example');

/** What a service's process sees with .env made from .env.example: the env file, then `environment`. */
const processEnv = (name: string) => ({
  ...(service(name).env_file ? example : {}),
  ...Object.fromEntries(
    Object.entries(service(name).environment ?? {}).map(([k, v]) => [k, String(v)]),
  ),
});

describe('docker-compose.yml', () => {
  it('when checked against the Compose specification schema, then it conforms', () => {
    const schema = JSON.parse(
      readFileSync('test/fixtures/compose-spec/compose-spec.json', 'utf8'),
    ) as object;
    const ajv = new Ajv({ allErrors: true, strict: false });
    // The schema names the draft-07 meta-schema by its https address; Ajv ships it under http.
    ajv.addMetaSchema({ ...draft07, $id: 'https://json-schema.org/draft-07/schema' });
    const check = ajv.compile(schema);
    // As Compose reads it: YAML merge keys (`<<: *service-env`) resolved first.
    check(compose);
    expect(check.errors ?? []).toEqual([]);
  });

  it('when parsed, then Temporal runs from the server image with its schema job, not auto-setup', () => {
    for (const s of Object.values(services)) expect(s.image ?? '').not.toContain('auto-setup');
    expect(service('temporal').image).toMatch(/^temporalio\/server:\d+\.\d+\.\d+$/);
    const schemaJob = service('temporal-schema');
    expect(schemaJob.image).toMatch(/^temporalio\/admin-tools:/);
    expect(schemaJob.image!.split(':')[1]).toBe(service('temporal').image!.split(':')[1]);
    expect(schemaJob.command!.join('\n')).toMatch(/temporal-sql-tool[\s\S]*update-schema/);
    expect(service('temporal').depends_on?.['temporal-schema']?.condition).toBe(
      'service_completed_successfully',
    );
    expect(service('postgresql').image).toMatch(/^postgres:\d+$/);
    expect(service('temporal-ui').image).toMatch(/^temporalio\/ui:/);
  });

  it('when MongoDB starts, then it is MongoDB 7 as a replica set that the services name', () => {
    expect(service('mongodb').image).toBe('mongo:7');
    expect(service('mongodb').command).toEqual(expect.arrayContaining(['--replSet', 'rs0']));
    expect(service('mongodb').healthcheck?.test.join(' ')).toContain('rs.initiate');
    for (const name of ['api', 'worker']) {
      expect(processEnv(name).MONGODB_URI).toMatch(/[?&]replicaSet=rs0\b/);
    }
  });

  it('when ports are published, then only the API listeners on every interface and the UI on loopback', () => {
    const published = Object.entries(services).filter(([, s]) => s.ports?.length);
    expect(published.map(([name]) => name).sort()).toEqual(['api', 'temporal-ui']);
    // The API, and the public tripwire listeners: URL tripwires and decoy APIs, decoy mail, Postgres.
    expect(service('api').ports).toEqual(['8080:8080', '8081:8081', '2525:2525', '5432:5432']);
    for (const port of service('temporal-ui').ports!) expect(port).toMatch(/^127\.0\.0\.1:/);
    expect(processEnv('temporal-ui').TEMPORAL_DISABLE_WRITE_ACTIONS).toBe('true');
  });

  it('when services are networked, then the data stores and Temporal reach only the internal network', () => {
    expect(compose.networks.internal?.internal).toBe(true);
    for (const name of ['mongodb', 'postgresql', 'temporal', 'temporal-schema', 'temporal-setup']) {
      expect(service(name).networks).toEqual(['internal']);
    }
  });

  it('when workers scale, then they publish no port and their health check asks the worker endpoint', () => {
    const worker = service('worker');
    expect(worker.ports).toBeUndefined();
    expect(worker.build).toBeUndefined();
    expect(worker.deploy?.replicas).toBeGreaterThan(1);
    const port = processEnv('worker').WORKER_METRICS_PORT;
    expect(worker.healthcheck?.test.join(' ')).toContain(`127.0.0.1:${port}/healthz`);
    expect(service('api').healthcheck?.test.join(' ')).toContain(
      `127.0.0.1:${processEnv('api').PORT}/readyz`,
    );
  });

  it('when the stack runs, then long-running services restart, one-shot jobs retry on failure only', () => {
    for (const [name, s] of Object.entries(services)) {
      expect([name, s.restart]).toEqual([
        name,
        name.endsWith('-schema') || name.endsWith('-setup')
          ? expect.stringMatching(/^on-failure/)
          : 'unless-stopped',
      ]);
    }
  });

  it('when secrets are needed, then they come from .env, never from the file itself', () => {
    const secrets = Object.values(services).flatMap((s) =>
      Object.entries(s.environment ?? {}).filter(([k]) => /PASSWORD|PWD|TOKEN|SECRET/.test(k)),
    );
    expect(secrets.length).toBeGreaterThan(0);
    for (const [name, value] of secrets) {
      expect([name, value]).toEqual([name, expect.stringMatching(/^\$\{\w+:\?[^}]+\}$/)]);
    }
    expect(service('api').env_file).toBe('.env');
    expect(service('worker').env_file).toBe('.env');
    expect(readFileSync('.gitignore', 'utf8').split('\n')).toContain('.env');
  });

  it('when the API and worker start, then their commands are the built entry points', () => {
    expect(service('api').command).toEqual(pkg.scripts['start:api']!.split(' '));
    expect(readFileSync('Dockerfile', 'utf8')).toContain(
      `CMD ${JSON.stringify(pkg.scripts['start:api']!.split(' '))}`.replace(/","/g, '", "'),
    );
    expect(service('worker').command).toEqual(pkg.scripts['start:worker']!.split(' '));
    expect(service('worker').image).toBe(service('api').image);
  });

  it.each(['api', 'worker'])(
    'when %s reads .env.example and its environment, then the config is valid and known',
    (name) => {
      const vars = processEnv(name);
      // .env.example also holds the compose file's own interpolation variables.
      const interpolated = [...composeText.matchAll(/\$\{(\w+)/g)].map((m) => m[1]);
      expect(
        Object.keys(vars).filter((k) => !CONFIG_VARIABLES.includes(k) && !interpolated.includes(k)),
      ).toEqual([]);
      expect(() => loadConfig(vars)).not.toThrow();
      expect(vars.TEMPORAL_ADDRESS).toBe('temporal:7233');
    },
  );

  it('when the stack starts, then every search attribute the workflows use is registered', () => {
    const setup = service('temporal-setup').command!.join('\n');
    for (const name of SEARCH_ATTRIBUTE_NAMES) expect(setup).toContain(name);
  });

  it('when services depend on others, volumes or networks, then those are all declared', () => {
    for (const s of Object.values(services)) {
      for (const dep of Object.keys(s.depends_on ?? {})) expect(services).toHaveProperty([dep]);
      for (const volume of s.volumes ?? []) {
        expect(compose.volumes).toHaveProperty([volume.split(':')[0]!]);
      }
      for (const network of s.networks ?? []) expect(compose.networks).toHaveProperty([network]);
    }
  });
});

describe('Dockerfile', () => {
  const dockerfile = readFileSync('Dockerfile', 'utf8');

  it('when linted, then it has no problems', () => {
    const problems = lintDockerfile(dockerfile).map((d) => [d.range.start.line + 1, d.message]);
    expect(problems).toEqual([]);
  });

  it('when built, then every COPY source exists and survives .dockerignore', () => {
    const ignored = dockerignore().add(readFileSync('.dockerignore', 'utf8').split('\n'));
    const sources = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) =>
      m[1]!.split(' '),
    );
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect([source, existsSync(source)]).toEqual([source, true]);
      // The tracked files the build context would hold under that source.
      const files = execFileSync('git', ['ls-files', '--', source], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean);
      expect([source, files.length > 0]).toEqual([source, true]);
      expect(files.filter((f) => ignored.ignores(f))).toEqual([]);
    }
  });

  it('when the image has no health check, then each service in the compose file has its own', () => {
    expect(dockerfile).not.toMatch(/^HEALTHCHECK/m);
    for (const name of ['api', 'worker']) expect(service(name).healthcheck).toBeDefined();
    expect(dockerfile).toContain('npm run build');
    expect(pkg.scripts.build).toBeDefined();
  });
});
