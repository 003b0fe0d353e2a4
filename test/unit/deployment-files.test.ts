import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import dockerignore from '@balena/dockerignore';
import Ajv from 'ajv';
import ipaddr from 'ipaddr.js';
import draft07 from 'ajv/dist/refs/json-schema-draft-07.json';
import { validate as lintDockerfile } from 'dockerfile-utils';
import { CONFIG_VARIABLES, loadConfig } from '../../src/config';
import { networksOf, readCompose, readEnvFile, serviceEnv } from '../../tools/compose-env';
import { SEARCH_ATTRIBUTE_NAMES } from '../../workflows/shared';

// No container engine runs on our machines, so the deployment files are checked with the tools an
// engine would apply: the Compose specification's schema, .dockerignore's matching rules applied to
// the Dockerfile's COPY sources, and a Dockerfile linter.
const composeText = readFileSync('docker-compose.yml', 'utf8');
const compose = readCompose();
const services = compose.services;
const service = (name: string) => services[name]!;
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
  scripts: Record<string, string>;
};

/**
 * .env as the documented steps make it: .env.example with its required values filled in. Its
 * placeholders-free form is the point: the API refuses `change-me` and its like.
 */
const dotenv = {
  ...readEnvFile('.env.example'),
  API_DOMAIN: 'tripwire.example.com',
  TRIPWIRE_DOMAIN: 't.example.com',
  CADDY_TLS: 'ops@example.com',
  TEMPORAL_DB_PASSWORD: 'pX4-7rTq2Lw9sZ0cVb',
  METRICS_TOKEN: 'k1Jf8s2Qm4Wz7Yx0Rt5u',
};
const processEnv = (name: string) => serviceEnv(service(name), dotenv);

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

  it('when ports are published, then only the TLS proxy on every interface and the UI on loopback', () => {
    const published = Object.entries(services).filter(([, s]) => s.ports?.length);
    expect(published.map(([name]) => name).sort()).toEqual(['proxy', 'temporal-ui']);
    expect(service('proxy').ports).toEqual(['80:80', '443:443', '443:443/udp']);
    for (const port of service('temporal-ui').ports!) expect(port).toMatch(/^127\.0\.0\.1:/);
    expect(processEnv('temporal-ui').TEMPORAL_DISABLE_WRITE_ACTIONS).toBe('true');
    expect(service('proxy').volumes).toContain('./deploy/Caddyfile:/etc/caddy/Caddyfile:ro');
  });

  it("when the API believes X-Forwarded-For, then only from the proxy's fixed address on a network of the two", () => {
    const front = compose.networks.front!;
    expect(front.internal).toBe(true);
    const proxyAddress = (service('proxy').networks as Record<string, { ipv4_address: string }>)
      .front!.ipv4_address;
    expect(processEnv('api').TRUST_PROXY).toBe(proxyAddress);
    const [subnet, bits] = front.ipam!.config[0]!.subnet.split('/') as [string, string];
    expect(ipaddr.parse(proxyAddress).match(ipaddr.parse(subnet), Number(bits))).toBe(true);
    const onFront = Object.entries(services).filter(([, s]) => networksOf(s).includes('front'));
    expect(onFront.map(([name]) => name).sort()).toEqual(['api', 'proxy']);
    expect(processEnv('api').PUBLIC_BASE_URL).toBe(`https://${dotenv.API_DOMAIN}`);
    expect(processEnv('api').PUBLIC_TRIPWIRE_URL).toBe(`https://${dotenv.TRIPWIRE_DOMAIN}`);
  });

  it('when .env leaves a required secret or domain empty, then Compose refuses to start', () => {
    for (const name of ['TEMPORAL_DB_PASSWORD', 'METRICS_TOKEN', 'API_DOMAIN', 'CADDY_TLS']) {
      expect(readEnvFile('.env.example')[name]).toBe('');
      const env = () =>
        ['api', 'proxy', 'postgresql'].map((s) =>
          serviceEnv(service(s), { ...dotenv, [name]: '' }),
        );
      expect(env).toThrow(new RegExp(`${name}: set ${name} in .env`));
    }
  });

  it('when the stack starts, then the evidence-key job has made the key the API reads', () => {
    const job = service('evidence-key');
    expect(job.command!.slice(0, 3)).toEqual(['node', 'dist/src/admin.cli.js', 'evidence-key']);
    const file = job.command![job.command!.indexOf('--file') + 1]!;
    expect(processEnv('api').EVIDENCE_SIGNING_KEY).toBe(file);
    expect(service('api').depends_on?.['evidence-key']?.condition).toBe(
      'service_completed_successfully',
    );
    const volume = (s: string) => service(s).volumes!.find((v) => v.startsWith('evidence-key:'))!;
    expect(volume('evidence-key').split(':')[1]).toBe(file.slice(0, file.lastIndexOf('/')));
    expect(volume('api')).toMatch(/:ro$/);
    expect(processEnv('api').METRICS_TOKEN).toBe(dotenv.METRICS_TOKEN);
  });

  it('when services are networked, then the data stores and Temporal reach only the internal network', () => {
    expect(compose.networks.internal?.internal).toBe(true);
    for (const name of ['mongodb', 'postgresql', 'temporal', 'temporal-schema', 'temporal-setup']) {
      expect(networksOf(service(name))).toEqual(['internal']);
    }
    expect(service('evidence-key').network_mode).toBe('none');
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
        name.endsWith('-schema') || name.endsWith('-setup') || name === 'evidence-key'
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
    expect(readFileSync('Dockerfile', 'utf8')).toMatch(/^FROM node:24-/m);
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
        const source = volume.split(':')[0]!;
        // A bind mount names a file of this repository; anything else is a named volume.
        if (source.startsWith('./')) expect([source, existsSync(source)]).toEqual([source, true]);
        else expect(compose.volumes).toHaveProperty([source]);
      }
      for (const network of networksOf(s)) expect(compose.networks).toHaveProperty([network]);
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
