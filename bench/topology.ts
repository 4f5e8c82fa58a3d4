/**
 * A realistic environment topology: 10 topology components (2 load generators, 6 services under
 * test, 2 supporting services) sharing `nodes` nodes, each node with host type, provider, region,
 * endpoint, resources, tags and metadata, as a performance-test environment would describe them.
 */

const HOST_TYPES = ['vm', 'container', 'kubernetes', 'baremetal'];
const PROVIDERS = ['aws', 'gcp', 'azure', 'onprem'];
const REGIONS = ['eu-central-1', 'eu-west-1', 'us-east-1', 'us-west-2'];

interface ComponentSpec {
  section: 'load_generators' | 'system_under_test' | 'supporting_services';
  name: string;
  type: string;
  endpoints: string[];
}

const COMPONENTS: ComponentSpec[] = [
  { section: 'load_generators', name: 'k6-cluster', type: 'load_generator', endpoints: [] },
  { section: 'load_generators', name: 'jmeter-workers', type: 'load_generator', endpoints: [] },
  {
    section: 'system_under_test',
    name: 'api-gateway',
    type: 'service',
    endpoints: ['/health', '/api'],
  },
  {
    section: 'system_under_test',
    name: 'checkout',
    type: 'service',
    endpoints: ['/checkout', '/cart'],
  },
  {
    section: 'system_under_test',
    name: 'catalog',
    type: 'service',
    endpoints: ['/products', '/search'],
  },
  {
    section: 'system_under_test',
    name: 'payments',
    type: 'service',
    endpoints: ['/pay', '/refund'],
  },
  {
    section: 'system_under_test',
    name: 'accounts',
    type: 'service',
    endpoints: ['/login', '/profile'],
  },
  { section: 'system_under_test', name: 'notifications', type: 'worker', endpoints: ['/notify'] },
  { section: 'supporting_services', name: 'postgres', type: 'database', endpoints: ['tcp/5432'] },
  { section: 'supporting_services', name: 'kafka', type: 'queue', endpoints: ['tcp/9092'] },
];

export type JsonObject = Record<string, unknown>;

/** The topology request body (before the service's normalisation). `generation` varies metadata. */
export function makeTopology(nodes: number, generation: number | string): JsonObject {
  const perComponent = Math.max(1, Math.floor(nodes / COMPONENTS.length));
  const topology: JsonObject = {
    load_generators: [],
    system_under_test: [],
    supporting_services: [],
    metadata: { generation, owner: 'perf-team', network: 'bench-vpc' },
  };
  COMPONENTS.forEach((c, ci) => {
    const list: JsonObject[] = [];
    for (let n = 0; n < perComponent; n++) {
      const k = ci * perComponent + n;
      list.push({
        name: `${c.name}-${String(n).padStart(3, '0')}`,
        host_type: HOST_TYPES[k % HOST_TYPES.length],
        role:
          c.section === 'load_generators'
            ? 'generator'
            : c.section === 'system_under_test'
              ? 'app'
              : 'backing',
        provider: PROVIDERS[ci % PROVIDERS.length],
        region: REGIONS[(ci + n) % REGIONS.length],
        endpoint: `${c.name}-${n}.bench.internal:${8000 + ci}`,
        count: 1 + (n % 3),
        resources: {
          cpu: String(2 + (n % 4) * 2),
          memory: `${4 * (1 + (n % 4))}Gi`,
          disk: '100Gi',
        },
        tags: ['bench', c.type],
        metadata: { rack: `r${n % 8}`, zone: `z${n % 3}`, image: `${c.name}:1.${ci}.${n % 5}` },
      });
    }
    (topology[c.section] as JsonObject[]).push({
      name: c.name,
      component_type: c.type,
      endpoints: c.endpoints,
      tags: ['bench'],
      metadata: { team: `team-${ci % 4}`, tier: ci < 2 ? 'load' : 'app' },
      nodes: list,
    });
  });
  return topology;
}
