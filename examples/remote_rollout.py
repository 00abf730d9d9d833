"""Roll out agents against envs served over HTTP, and check that the episodes are the local ones.

    python examples/remote_rollout.py                          # starts a server on loopback for the demo
    sttgym serve --privileged --port 8000 &                    # or use a running server
    python examples/remote_rollout.py --url http://127.0.0.1:8000

The oracle reads the task it plays, so the server must share tasks (``--privileged``).
"""

import argparse
import contextlib
import statistics
import time

import gymnasium as gym

import sttgym
import sttgym.wrappers
from sttgym.agents import CycleTracingAgent, OracleAgent
from sttgym.server import RemoteEnv

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--url", help="a running `sttgym serve --privileged` server (default: start one here)")
args = parser.parse_args()

with contextlib.ExitStack() as stack:
    if args.url:
        url = args.url
    else:
        from sttgym.server.app import running  # needs the serve extra: pip install 'sttgym[serve]'

        url = stack.enter_context(running(privileged=True))
    print(f"server: {url}")

    # Any id, any wrapper stack (named with its parameters), any gym.make keyword: built on the server.
    # The cycle-tracing agent reads hidden output fields off a local Obfuscate layer, which a remote env does
    # not have: its ScrambleTool episode keeps the fields in plaintext.
    plays = [("STTArena/ColdChain-T2-medium", [], OracleAgent, {}),
             ("STTArena/CarRental-S1-hard", [("MappingDrift", {"fraction": 0.25}), ("StochasticFailure", {"p": 0.1})],
              OracleAgent, {}),
             ("ScrambleTool/Drift", [], CycleTracingAgent, {"nested_keys": False})]
    for env_id, wrappers, agent, make_kwargs in plays:
        remote = gym.make("sttgym/Remote", url=url, env_id=env_id, wrappers=wrappers, **make_kwargs)
        traj = sttgym.rollout(remote, agent(), seed=0)
        remote.close()
        local_env = gym.make(env_id, **make_kwargs)
        for name, kwargs in wrappers:
            local_env = getattr(sttgym.wrappers, name)(local_env, **kwargs)
        local = sttgym.rollout(local_env, agent(), seed=0)
        same = traj.steps == local.steps and traj.info == local.info
        print(f"{env_id} {[w[0] for w in wrappers] or ''}: reward {traj.reward:.2f} in {len(traj.steps)} steps "
              f"({'same episode as locally' if same else 'DIFFERS from the local episode'})")

    # What a step costs over the wire, against the same step in-process.
    env_id, action = "STTArena/ColdChain-T2-medium", {"name": "list_sites", "arguments": {}}
    costs = {}
    for name, env in (("local", gym.make(env_id)), ("remote", RemoteEnv(url, env_id))):
        env.reset(seed=0)
        seconds = []
        for i in range(200):
            if i % 40 == 39:
                env.reset(seed=i)  # stay below the turn cap
            started = time.perf_counter()
            env.step(action)
            seconds.append(time.perf_counter() - started)
        env.close()
        costs[name] = statistics.median(seconds) * 1e3
    print(f"median step: local {costs['local']:.3f} ms, remote {costs['remote']:.3f} ms")
