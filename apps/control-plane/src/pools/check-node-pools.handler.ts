import { ApiPropertyOptional } from '@nestjs/swagger';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { plainToInstance } from 'class-transformer';
import { IsInt, IsOptional, Max, Min, validateSync } from 'class-validator';
import { CheckNodePools } from '../clusters';
import { DomainError } from '@fleet/kernel';
import { validationFailed } from '../platform/errors/error-envelope';
import { flatten } from '../platform/http/validation.pipe';
import { registerOpenApiModels } from '../platform/openapi/openapi';
import { CreateNodePoolDto } from './pools.dto';
import { refuseOtherKindFields } from './pools.service';

/** A pool of a cluster's create: the node-pool create body, and how many nodes it starts with. */
export class ClusterPoolSpecDto extends CreateNodePoolDto {
  @ApiPropertyOptional({
    minimum: 0,
    maximum: 100,
    description: 'Nodes made with the cluster (default autoscaling.min if given, else 1)',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(100)
  size?: number;
}

// POST /v1/clusters names it by reference (clusters sits below pools).
registerOpenApiModels(ClusterPoolSpecDto);

type Problem = { field: string; problems: string[] };

/** One pool's problems, each field named under `nodePools[i]`. */
const problemsOf = (raw: unknown, i: number): Problem[] => {
  const at = `nodePools[${i}]`;
  const spec = plainToInstance(ClusterPoolSpecDto, raw);
  const errors = validateSync(spec, {
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    validationError: { target: false, value: false },
  });
  if (errors.length > 0) return flatten(errors, at);
  const problems: Problem[] = [];
  try {
    refuseOtherKindFields(spec);
  } catch (error) {
    const fields = (error as DomainError).details?.fields as Problem[] | undefined;
    for (const f of fields ?? [])
      problems.push({ field: `${at}.${f.field}`, problems: f.problems });
  }
  const { autoscaling, size } = spec;
  if (autoscaling && autoscaling.min > autoscaling.max)
    problems.push({
      field: `${at}.autoscaling.min`,
      problems: ['must not exceed autoscaling.max'],
    });
  if (autoscaling && size !== undefined && (size < autoscaling.min || size > autoscaling.max))
    problems.push({ field: `${at}.size`, problems: ['must lie within autoscaling [min, max]'] });
  return problems;
};

@CommandHandler(CheckNodePools)
export class CheckNodePoolsHandler implements ICommandHandler<CheckNodePools> {
  async execute({ pools }: CheckNodePools): Promise<void> {
    const problems = pools.flatMap((raw, i) => problemsOf(raw, i));
    const names = pools.map((p) => (p as { name?: unknown }).name);
    names.forEach((name, i) => {
      if (typeof name === 'string' && names.indexOf(name) !== i)
        problems.push({ field: `nodePools[${i}].name`, problems: [`${name} is given twice`] });
    });
    if (problems.length > 0) throw validationFailed(problems);
  }
}
