// Issued keys in Redis: a {global} hash sha256 -> JSON with an id index, and change notices over pub/sub.
import type { Cluster, Redis } from 'ioredis';
import type { IssuedKey } from '../types.ts';
import { cloneKey, patchKey, sortKeys, type KeyPatch } from '../issued-keys.ts';
import { scripts, type RedisClient } from '../lua/index.ts';
import type { KeyLayout } from './keys.ts';

export class RedisIssuedKeys {
  private readonly client: RedisClient;
  private readonly layout: KeyLayout;
  private listeners = new Set<() => void>();
  private subscriber: RedisClient | undefined;
  private subscribed: Promise<void> | undefined;

  constructor(client: RedisClient, layout: KeyLayout) {
    this.client = client;
    this.layout = layout;
  }

  private get hashes(): string[] { return [this.layout.global.keys, this.layout.global.keyIds]; }

  private async announce(): Promise<void> {
    await this.client.publish(this.layout.channel, '1');
  }

  async put(key: IssuedKey): Promise<void> {
    await scripts.keyPut.run(this.client, this.hashes, [key.id, key.sha256, JSON.stringify(cloneKey(key))]);
    await this.announce();
  }

  async get(sha256: string): Promise<IssuedKey | undefined> {
    const json = await this.client.hget(this.layout.global.keys, sha256);
    return json ? (JSON.parse(json) as IssuedKey) : undefined;
  }

  async list(): Promise<IssuedKey[]> {
    const all = await this.client.hvals(this.layout.global.keys);
    return sortKeys(all.map((j) => JSON.parse(j) as IssuedKey));
  }

  async update(id: string, patch: KeyPatch): Promise<boolean> {
    // Optimistic: merge in JS, write only if the stored JSON is still the one read (another process may race).
    for (let attempt = 0; attempt < 20; attempt++) {
      const sha = await this.client.hget(this.layout.global.keyIds, id);
      const json = sha ? await this.client.hget(this.layout.global.keys, sha) : null;
      if (!json) return false;
      const next = JSON.stringify(cloneKey(patchKey(JSON.parse(json) as IssuedKey, patch)));
      const r = Number(await scripts.keyUpdate.run(this.client, this.hashes, [id, json, next]));
      if (r === 0) return false;
      if (r === 1) { await this.announce(); return true; }
    }
    throw new Error(`updateKey(${id}): the key kept changing concurrently`);
  }

  async delete(id: string): Promise<boolean> {
    const r = Number(await scripts.keyDelete.run(this.client, this.hashes, [id]));
    if (r === 1) await this.announce();
    return r === 1;
  }

  /** Resolves once the subscription is live, so a change made after that reaches this listener. */
  onChanged(listener: () => void): Promise<void> {
    this.listeners.add(listener);
    this.subscribed ??= this.subscribe();
    return this.subscribed;
  }

  private async subscribe(): Promise<void> {
    // A subscribed connection can run nothing else, so it is a separate one, made only when needed.
    const c = this.client;
    const sub: RedisClient = (this.subscriber = c.isCluster ? (c as Cluster).duplicate() : (c as Redis).duplicate());
    const events = sub as unknown as NodeJS.EventEmitter; // Redis | Cluster: their on() overloads do not unite
    const channel = this.layout.channel;
    const fire = () => { for (const fn of this.listeners) fn(); };
    events.on('message', (ch: string) => { if (ch === channel) fire(); });
    let ready = false;
    // Notices sent while the subscriber was reconnecting are lost: tell listeners to reload instead.
    events.on('ready', () => { if (ready) fire(); });
    events.on('error', () => { /* ioredis reconnects by itself; commands report their own errors */ });
    // Redis may be away when the gateway starts: keep trying, and once subscribed tell listeners to reload.
    for (let wait = 500, failed = false; ; wait = Math.min(wait * 2, 30_000), failed = true) {
      try {
        await sub.subscribe(channel);
        if (failed) fire();
        break;
      } catch {
        if (this.subscriber !== sub) return; // closed meanwhile
        await new Promise((resolve) => setTimeout(resolve, wait).unref());
      }
    }
    ready = true;
  }

  async close(): Promise<void> {
    this.listeners.clear();
    const sub = this.subscriber;
    this.subscriber = undefined;
    // A subscriber has nothing to finish: drop it now (a subscribe still being retried sees it gone and stops).
    sub?.disconnect();
  }
}
