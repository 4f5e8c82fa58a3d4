import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { MetricsService } from '../../common/http/metrics.service';
import { APP_CONFIG, AppConfig } from '../../config/config';

/**
 * Prometheus `/metrics` on its own small HTTP server (METRICS_PORT, bound to METRICS_HOST, default
 * 127.0.0.1), never on the API port: the metrics name every route and its traffic, which the API's
 * audience need not see. Off unless METRICS_PORT is set; closed when the application shuts down.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private server: Server | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.metricsPort === null || this.server) return;
    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path !== '/metrics') {
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found: try /metrics\n');
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' }).end();
        return;
      }
      this.metrics.registry.metrics().then(
        (body) => {
          res.writeHead(200, {
            'Content-Type': this.metrics.registry.contentType,
            'Cache-Control': 'no-store',
          });
          res.end(req.method === 'HEAD' ? undefined : body);
        },
        (err: unknown) => {
          this.logger.error({ err }, 'collecting the metrics failed');
          res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end();
        },
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.metricsPort ?? 0, this.config.metricsHost, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    const { address, port } = server.address() as AddressInfo;
    this.logger.log(`Metrics at http://${address.includes(':') ? `[${address}]` : address}:${port}/metrics`);
  }

  /** The bound address, or null when the metrics server is off. */
  address(): AddressInfo | null {
    return this.server ? (this.server.address() as AddressInfo) : null;
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}
