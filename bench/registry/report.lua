-- Appended to every bench script: one machine-readable summary line.
done = function(summary, latency, requests)
        local secs = summary.duration / 1e6
        io.write(string.format("RESULT rps=%.0f p50_ms=%.2f p99_ms=%.2f requests=%d non2xx=%d sockerr=%d\n",
                summary.requests / secs, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
                summary.requests, summary.errors.status,
                summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
