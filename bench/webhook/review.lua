-- wrk script: POST AdmissionReviews, alternating an allowed and a denied TrainedModel.
local dir = debug.getinfo(1, "S").source:sub(2):match("(.*/)")
local function slurp(name)
        local f = assert(io.open(dir .. name, "r"))
        local s = f:read("*a")
        f:close()
        return s
end
local bodies = { slurp("review-allowed.json"), slurp("review-denied.json") }
local n = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
        n = n + 1
        return wrk.format(nil, nil, nil, bodies[n % 2 + 1])
end
