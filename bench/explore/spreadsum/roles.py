#!/usr/bin/env python3
# A model of spreadsum.patch's roles over ImaStreamK's split: every shared tile's units are
# counted once, each spread tile's row groups are emitted once, every waiter's target is met.
def check(K, N, G):
    KS, NS = -(-K // 256), -(-N // 192)
    units = KS * NS
    q, r = divmod(units, G)
    start = lambda b: b * q + min(b, r)
    def owner(u):
        return u // (q + 1) if u < r * (q + 1) else r + (u - r * (q + 1)) // q
    def spread_of(t):
        lo, hi = owner(t * KS), owner(t * KS + KS - 1)
        return lo, hi, (hi - lo) + (1 if start(hi + 1) == (t + 1) * KS else 0)
    count = {}; emitted = {}; waits = []
    spread_at = {}
    for b in range(G):
        u0, u1 = start(b), start(b + 1)
        if u1 <= u0: spread_at[b] = -1; continue
        lo, hi, p = spread_of((u1 - 1) // KS)
        spread_at[b] = (u1 - 1) // KS if p >= 2 else -1
    for b in range(G):
        u0, u1 = start(b), start(b + 1)
        if u1 <= u0: continue
        # delegate (a): first tile as follower
        if u0 % KS:
            t = u0 // KS
            count[t] = count.get(t, 0) + min(u1, (t + 1) * KS) - u0
        last = (u1 - 1) // KS
        if spread_at[b] == last and last * KS >= u0:
            count[last] = count.get(last, 0) + u1 - last * KS
        # consumers' tile ends
        t = u0 // KS
        while t * KS < u1:
            kc_end = min(u1, (t + 1) * KS)
            lo_here = t * KS >= u0
            complete = lo_here and kc_end == (t + 1) * KS
            if complete:
                for j in range(4): emitted[(t, j)] = emitted.get((t, j), 0) + 1
            else:
                spread = spread_at[b] == t
                if spread or lo_here:
                    if spread:
                        lo, hi, p = spread_of(t); share = b - lo
                        assert 0 <= share < p, (b, t, lo, hi, p)
                        waits.append((t, KS))
                        for j in range(4):
                            if j % p == share: emitted[(t, j)] = emitted.get((t, j), 0) + 1
                    else:
                        waits.append((t, KS - (kc_end - u0)))
                        for j in range(4): emitted[(t, j)] = emitted.get((t, j), 0) + 1
            t += 1
    for t in range(NS):
        for j in range(4):
            assert emitted.get((t, j), 0) == 1, (K, N, G, t, j, emitted.get((t, j)))
    for t, target in waits:
        assert count.get(t, 0) >= target, (K, N, G, t, target, count.get(t))
    spreads = sum(1 for t in range(NS) if spread_of(t)[2] >= 2 and spread_of(t)[0] != spread_of(t)[1])
    return spreads, NS
for K, N in [(4096, 6144), (4096, 4096), (4096, 28672), (14336, 4096), (256, 192), (8192, 28672), (512, 4096), (4096, 384)]:
    for G in [132, 131, 114, 100, 66, 7, 1]:
        s, ns = check(K, N, G)
        if G == 132: print(K, N, 'spread tiles', s, 'of', ns)
print('ok')
