// The work queue's two key containers: a FIFO of ready keys and a min-heap of delayed keys by
// deadline, one entry per key. Data structures only: no timers, no clock, no knowledge of what a
// key means (workqueue.ts owns those).

/** FIFO of keys with O(1) shift; compacts its backing array once half of it is consumed. */
export class KeyFifo {
  #items: Array<string | undefined> = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(key: string): void {
    this.#items.push(key);
  }

  shift(): string | undefined {
    if (this.#head >= this.#items.length) {
      return undefined;
    }
    const key = this.#items[this.#head];
    this.#items[this.#head] = undefined;
    this.#head += 1;
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return key;
  }
}

interface DelayedKey {
  key: string;
  readyAt: number;
  index: number;
}

/** Min-heap of delayed keys by deadline, one entry per key. */
export class DelayHeap {
  readonly #heap: DelayedKey[] = [];
  readonly #byKey = new Map<string, DelayedKey>();

  /** Records `key` at `readyAt` unless it already waits for an earlier deadline. True if changed. */
  upsertEarliest(key: string, readyAt: number): boolean {
    const existing = this.#byKey.get(key);
    if (existing !== undefined) {
      if (readyAt >= existing.readyAt) {
        return false;
      }
      existing.readyAt = readyAt;
      this.#siftUp(existing.index);
      return true;
    }
    const entry: DelayedKey = { key, readyAt, index: this.#heap.length };
    this.#heap.push(entry);
    this.#byKey.set(key, entry);
    this.#siftUp(entry.index);
    return true;
  }

  peekReadyAt(): number | undefined {
    return this.#heap[0]?.readyAt;
  }

  /** The waiting keys, in no order (a copy: the caller may reschedule them). */
  keys(): string[] {
    return [...this.#byKey.keys()];
  }

  /** Removes and returns the earliest key whose deadline is at or before `now`. */
  popReady(now: number): string | undefined {
    const top = this.#heap[0];
    if (top === undefined || top.readyAt > now) {
      return undefined;
    }
    const last = this.#heap.pop();
    if (last !== undefined && last !== top) {
      last.index = 0;
      this.#heap[0] = last;
      this.#siftDown(0);
    }
    this.#byKey.delete(top.key);
    return top.key;
  }

  clear(): void {
    this.#heap.length = 0;
    this.#byKey.clear();
  }

  #siftUp(start: number): void {
    let index = start;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      if (!this.#swapIfBefore(index, parentIndex)) {
        return;
      }
      index = parentIndex;
    }
  }

  #siftDown(start: number): void {
    let index = start;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let smallest = index;
      if (this.#isBefore(left, smallest)) {
        smallest = left;
      }
      if (this.#isBefore(right, smallest)) {
        smallest = right;
      }
      if (smallest === index) {
        return;
      }
      this.#swap(index, smallest);
      index = smallest;
    }
  }

  #isBefore(a: number, b: number): boolean {
    const entryA = this.#heap[a];
    const entryB = this.#heap[b];
    return entryA !== undefined && entryB !== undefined && entryA.readyAt < entryB.readyAt;
  }

  #swapIfBefore(a: number, b: number): boolean {
    if (!this.#isBefore(a, b)) {
      return false;
    }
    this.#swap(a, b);
    return true;
  }

  #swap(a: number, b: number): void {
    const entryA = this.#heap[a];
    const entryB = this.#heap[b];
    if (entryA === undefined || entryB === undefined) {
      return;
    }
    this.#heap[a] = entryB;
    this.#heap[b] = entryA;
    entryA.index = b;
    entryB.index = a;
  }
}
